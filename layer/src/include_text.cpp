// The directives of OpenCL C text and the build options' words
// (include_text.hpp).

#include "include_text.hpp"

#include <cctype>
#include <cstring>

namespace kcache::layer {
namespace {

bool is_ident(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// `text` with continued lines joined (backslash-newline removed).
std::string spliced(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\\') {
            std::size_t j = i + 1;
            j += j < text.size() && text[j] == '\r' ? 1 : 0;
            if (j < text.size() && text[j] == '\n') {
                i = j;
                continue;
            }
        }
        out += text[i];
    }
    return out;
}

// `text` without comments (each becomes one space, as the compiler sees
// it); string and character literals are kept as they are, and end at the
// line's end when unclosed.
std::string without_comments(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        const char c = text[i];
        if (c == '/' && i + 1 < text.size() && (text[i + 1] == '/' || text[i + 1] == '*')) {
            const bool line = text[i + 1] == '/';
            const std::size_t end = line ? text.find('\n', i) : text.find("*/", i + 2);
            out += ' ';
            i = end == std::string::npos ? text.size() : line ? end : end + 2;
            continue;
        }
        out += c;
        ++i;
        if (c == '"' || c == '\'') {
            while (i < text.size() && text[i] != c && text[i] != '\n') {
                if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
                    out += text[i++];
                }
                out += text[i++];
            }
        }
    }
    return out;
}

std::string_view trimmed(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\f\v");
    if (first == std::string_view::npos) {
        return {};
    }
    return s.substr(first, s.find_last_not_of(" \t\r\f\v") - first + 1);
}

// An identifier at the start of `s` (after blanks), or "".
std::string_view leading_identifier(std::string_view s) {
    s = trimmed(s);
    std::size_t n = 0;
    while (n < s.size() && is_ident(s[n])) {
        ++n;
    }
    return s.substr(0, n);
}

void add_directive(std::string_view line, Directives& d) {
    line = trimmed(line);
    if (line.empty() || line.front() != '#') {
        return;
    }
    std::string_view rest = trimmed(line.substr(1));
    const std::string_view name = leading_identifier(rest);
    rest = trimmed(rest.substr(name.size()));
    if (name == "include" || name == "include_next" || name == "import") {
        d.includes.push_back({std::string(rest)});
    } else if (name == "define" || name == "undef") {
        d.defined.insert(std::string(leading_identifier(rest)));
    } else if (rest.find("__has_include") != std::string_view::npos) {
        d.has_include_test = true;
    }
}

}  // namespace

bool may_include(std::string_view text) {
    // One pass over the text for both words (string_view::find is a pass
    // each): every build the layer answers asks it of its whole source.
    if (text.empty()) {
        return false;
    }
    const char* at = text.data();
    const char* const end = at + text.size();
    while ((at = static_cast<const char*>(std::memchr(at, 'i', end - at))) != nullptr) {
        const std::string_view rest(at, end - at);
        if (rest.starts_with("include") || rest.starts_with("import")) {
            return true;
        }
        ++at;
    }
    return false;
}

Directives directives_of(std::string_view text) {
    const std::string clean = without_comments(spliced(text));
    Directives d;
    std::size_t start = 0;
    while (start < clean.size()) {
        std::size_t end = clean.find('\n', start);
        end = end == std::string::npos ? clean.size() : end;
        add_directive(std::string_view(clean).substr(start, end - start), d);
        start = end + 1;
    }
    return d;
}

std::optional<std::vector<std::string>> split_options(std::string_view options) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    bool quoted = false;
    for (const char c : options) {
        if (c == '\\' || c == '\'') {
            return std::nullopt;
        }
        if (c == '"') {
            quoted = !quoted;
            in_word = true;
        } else if (!quoted && std::isspace(static_cast<unsigned char>(c)) != 0) {
            if (in_word) {
                words.push_back(std::move(word));
                word.clear();
            }
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (quoted) {
        return std::nullopt;
    }
    if (in_word) {
        words.push_back(std::move(word));
    }
    return words;
}

}  // namespace kcache::layer
