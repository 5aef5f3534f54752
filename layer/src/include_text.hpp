#pragma once
// What the layer reads of OpenCL C text to find the files a compile reads
// (docs/design.md, "The OpenCL layer", includes): the directives of a text,
// and the include operands that macros from the build options produce.

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace kcache::layer {

// One `#include` (or `#include_next`, `#import`) of a text.
struct IncludeLine {
    std::string operand;  // what follows the directive's name, trimmed
};

// The directives of a text that decide which files a compile reads, with
// comments removed and continued lines joined.
struct Directives {
    std::vector<IncludeLine> includes;
    std::set<std::string> defined;  // names of every #define and #undef
    bool has_include_test = false;  // `__has_include` in a directive
};
Directives directives_of(std::string_view text);

// Whether `text` can hold an include at all: a directive needs the word
// `include` or `import` (a cheap test before directives_of).
bool may_include(std::string_view text);

// A macro of the build options (`-D NAME`, `-D NAME=BODY`, `-D F(x)=BODY`).
struct Macro {
    bool function_like = false;
    std::vector<std::string> params;
    std::string body;
};
using Macros = std::map<std::string, Macro>;

// The build options split as the compiler splits them (double quotes
// group, and are removed), or nullopt for what the layer does not split
// (a backslash, a single quote, an unclosed quote).
std::optional<std::vector<std::string>> split_options(std::string_view options);

// An include operand after expansion: `name` as written between the quotes
// or angle brackets, `quoted` for "name".
struct IncludeName {
    std::string name;
    bool quoted = false;
};
// Expands `operand` with `macros` alone. On success, `identifiers` has every
// identifier the expansion met (a later #define of one of them, or a
// predefined macro, would change the answer: the caller checks). On
// failure, `error` says why.
std::optional<IncludeName> expand_include(std::string_view operand, const Macros& macros,
                                          std::set<std::string>& identifiers, std::string& error);

}  // namespace kcache::layer
