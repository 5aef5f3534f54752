// Include operands made by macros of the build options (include_text.hpp):
// `#include M2S(INCLUDE_PATH/inc_types.h)` with `-D INCLUDE_PATH=/dir
// -D XM2S(x)=#x -D M2S(x)=XM2S(x)`, as hashcat builds its kernels. Only
// what the C preprocessor does with such operands: object-like and
// function-like macros, arguments expanded before substitution, `#`
// (stringizing) and rescanning; `##` is refused.

#include <cctype>

#include "include_text.hpp"

namespace kcache::layer {
namespace {

enum class Kind { identifier, literal, other };
struct Token {
    Kind kind = Kind::other;
    std::string text;
    bool space_before = false;
};
using Tokens = std::vector<Token>;

bool ident_start(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_';
}
bool ident_char(char c) {
    return ident_start(c) || std::isdigit(static_cast<unsigned char>(c)) != 0;
}

// The length of the token at `s[i]` of `kind`.
std::size_t token_length(std::string_view s, std::size_t i, Kind& kind) {
    const char c = s[i];
    std::size_t j = i + 1;
    if (ident_start(c)) {
        kind = Kind::identifier;
        while (j < s.size() && ident_char(s[j])) {
            ++j;
        }
    } else if (c == '"' || c == '\'') {
        kind = Kind::literal;
        while (j < s.size() && s[j] != c) {
            j += s[j] == '\\' ? 2 : 1;
        }
        j = j < s.size() ? j + 1 : s.size();
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
        while (j < s.size() && (ident_char(s[j]) || s[j] == '.')) {
            ++j;
        }
    } else if (c == '#' && j < s.size() && s[j] == '#') {
        ++j;
    }
    return j - i;
}

Tokens lex(std::string_view s) {
    Tokens out;
    bool space = false;
    for (std::size_t i = 0; i < s.size();) {
        if (std::isspace(static_cast<unsigned char>(s[i])) != 0) {
            space = true;
            ++i;
            continue;
        }
        Token t;
        t.kind = Kind::other;
        const std::size_t n = token_length(s, i, t.kind);
        t.text = std::string(s.substr(i, n));
        t.space_before = space;
        out.push_back(std::move(t));
        space = false;
        i += n;
    }
    return out;
}

Token stringized(const Tokens& arg) {
    Token t{Kind::literal, "\"", false};
    for (std::size_t k = 0; k < arg.size(); ++k) {
        t.text += k > 0 && arg[k].space_before ? " " : "";
        for (const char c : arg[k].text) {
            if (arg[k].kind == Kind::literal && (c == '"' || c == '\\')) {
                t.text += '\\';
            }
            t.text += c;
        }
    }
    t.text += '"';
    return t;
}

struct Expander {
    const Macros& macros;
    std::set<std::string>& identifiers;
    std::string& error;

    bool fail(std::string why) {
        error = std::move(why);
        return false;
    }

    // The arguments of a call whose '(' is at `in[open]`; `end` is past ')'.
    bool arguments(const Tokens& in, std::size_t open, std::vector<Tokens>& args,
                   std::size_t& end) {
        int depth = 0;
        args.assign(1, {});
        for (std::size_t i = open; i < in.size(); ++i) {
            const std::string& t = in[i].text;
            depth += t == "(" ? 1 : t == ")" ? -1 : 0;
            if (depth == 0) {
                end = i + 1;
                return true;
            }
            if (i == open) {
                continue;
            }
            if (depth == 1 && t == ",") {
                args.emplace_back();
            } else {
                args.back().push_back(in[i]);
            }
        }
        return fail("a macro call without its closing parenthesis");
    }

    // The body of function-like `m` with `args` substituted.
    bool substitute(const Macro& m, const std::vector<Tokens>& args,
                    const std::set<std::string>& off, int depth, Tokens& out) {
        const Tokens body = lex(m.body);
        for (std::size_t j = 0; j < body.size(); ++j) {
            if (body[j].text == "##") {
                return fail("the operand's macros paste tokens (##)");
            }
            const bool hash = body[j].text == "#" && j + 1 < body.size();
            const std::string& name = hash ? body[j + 1].text : body[j].text;
            std::size_t p = 0;
            while (p < m.params.size() && m.params[p] != name) {
                ++p;
            }
            if (p == m.params.size()) {
                out.push_back(body[j]);
            } else if (hash) {
                out.push_back(stringized(args[p]));
                ++j;
            } else {
                Tokens expanded;
                if (!expand(args[p], off, depth + 1, expanded)) {
                    return false;
                }
                out.insert(out.end(), expanded.begin(), expanded.end());
            }
        }
        return true;
    }

    // Replaces the macro named at `in[i]` (advancing `i`); false on failure.
    bool replace(const Tokens& in, std::size_t& i, const Macro& m, std::set<std::string> off,
                 int depth, Tokens& out) {
        off.insert(in[i].text);
        Tokens replaced;
        if (!m.function_like) {
            replaced = lex(m.body);
            ++i;
        } else {
            std::vector<Tokens> args;
            std::size_t end = 0;
            if (!arguments(in, i + 1, args, end)) {
                return false;
            }
            if (args.size() != m.params.size() &&
                !(m.params.empty() && args.size() == 1 && args.front().empty())) {
                return fail("a macro called with the wrong number of arguments");
            }
            if (!substitute(m, args, off, depth, replaced)) {
                return false;
            }
            i = end;
        }
        return expand(replaced, off, depth + 1, out);
    }

    bool expand(const Tokens& in, const std::set<std::string>& off, int depth, Tokens& out) {
        if (depth > 64) {
            return fail("the operand's macros nest too deeply");
        }
        for (std::size_t i = 0; i < in.size();) {
            const Token& t = in[i];
            const auto m = t.kind == Kind::identifier ? macros.find(t.text) : macros.end();
            if (t.kind == Kind::identifier) {
                identifiers.insert(t.text);
            }
            const bool call = m != macros.end() && m->second.function_like;
            const bool expands = m != macros.end() && off.count(t.text) == 0 &&
                                 (!call || (i + 1 < in.size() && in[i + 1].text == "("));
            if (!expands) {
                out.push_back(t);
                ++i;
                continue;
            }
            const std::size_t first = out.size();
            if (!replace(in, i, m->second, off, depth, out)) {
                return false;
            }
            if (out.size() > first) {
                out[first].space_before = t.space_before;
            }
        }
        return true;
    }
};

// The name of an operand that starts with '"' or '<' (nullopt if unclosed).
std::optional<IncludeName> literal_name(std::string_view s) {
    const char close = s.front() == '"' ? '"' : '>';
    const auto end = s.find(close, 1);
    if (end == std::string_view::npos) {
        return std::nullopt;
    }
    return IncludeName{std::string(s.substr(1, end - 1)), close == '"'};
}

}  // namespace

std::optional<IncludeName> expand_include(std::string_view operand, const Macros& macros,
                                          std::set<std::string>& identifiers, std::string& error) {
    if (!operand.empty() && (operand.front() == '"' || operand.front() == '<')) {
        auto name = literal_name(operand);
        if (!name) {
            error = "an #include without its closing quote";
        }
        return name;
    }
    Tokens out;
    Expander e{macros, identifiers, error};
    if (!e.expand(lex(operand), {}, 0, out)) {
        return std::nullopt;
    }
    std::string text;
    for (const Token& t : out) {
        text += (text.empty() || !t.space_before ? "" : " ") + t.text;
    }
    auto name = text.empty() ? std::nullopt : literal_name(text);
    if (!name || text.find('\\') != std::string::npos) {
        error =
            "`#include " + std::string(operand) + "` expands to `" + text + "`, not a file name";
        return std::nullopt;
    }
    return name;
}

}  // namespace kcache::layer
