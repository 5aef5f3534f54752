#include "located_json.hpp"

#include <algorithm>
#include <deque>
#include <iterator>

#include "kcache/common/work.hpp"

namespace kcache::device_db::detail {
namespace {

using nlohmann::json;

// An input iterator over the text that counts the characters handed to the lexer.
class CountingIterator {
  public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    CountingIterator(const char* p, std::size_t* consumed) : p_(p), consumed_(consumed) {}
    reference operator*() const { return *p_; }
    CountingIterator& operator++() {
        ++p_;
        ++*consumed_;
        return *this;
    }
    CountingIterator operator++(int) {
        CountingIterator old = *this;
        ++*this;
        return old;
    }
    bool operator==(const CountingIterator& o) const { return p_ == o.p_; }

  private:
    const char* p_;
    std::size_t* consumed_;
};

// Maps byte offsets to 1-based line numbers.
class LineIndex {
  public:
    explicit LineIndex(std::string_view text) {
        for (std::size_t i = 0; i < text.size(); ++i) {
            if (text[i] == '\n') {
                newlines_.push_back(i);
            }
        }
    }
    int line_of(std::size_t offset) const {
        auto it = std::lower_bound(newlines_.begin(), newlines_.end(), offset);
        return static_cast<int>(it - newlines_.begin()) + 1;
    }

  private:
    std::vector<std::size_t> newlines_;
};

// Builds the DOM and the line map from SAX events.
class Builder : public nlohmann::json_sax<json> {
  public:
    Builder(std::string_view text, const std::string& file, const std::size_t* consumed,
            LocatedJson& out)
        : text_(text), file_(file), index_(text), consumed_(consumed), out_(out) {}

    bool null() override { return put(json(nullptr), last_char_line()); }
    bool boolean(bool v) override { return put(json(v), last_char_line()); }
    bool number_integer(number_integer_t v) override { return put(json(v), number_line()); }
    bool number_unsigned(number_unsigned_t v) override { return put(json(v), number_line()); }
    bool number_float(number_float_t v, const string_t&) override {
        return put(json(v), number_line());
    }
    bool string(string_t& v) override { return put(json(std::move(v)), last_char_line()); }
    bool binary(binary_t&) override { return false; }
    bool start_object(std::size_t) override { return open(json::object()); }
    bool start_array(std::size_t) override { return open(json::array()); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }

    bool key(string_t& k) override {
        Frame& top = stack_.back();
        const std::string pointer = child_pointer(top.pointer, k);
        top.discard_member = top.node->contains(k);
        if (top.discard_member) {
            problems_.push_back({DeviceDbErrc::duplicate, file_, last_char_line(),
                                 "duplicate key \"" + k + "\" (first at line " +
                                     std::to_string(out_.line_of(pointer)) + ")"});
        } else {
            out_.lines[pointer] = last_char_line();
        }
        top.key = std::move(k);
        return true;
    }

    bool parse_error(std::size_t position, const std::string&,
                     const nlohmann::detail::exception& ex) override {
        std::string what = ex.what();
        // nlohmann says "... at line L, column C: problem"; keep only the problem.
        auto col = what.find(", column ");
        auto colon = col == std::string::npos ? col : what.find(": ", col);
        std::string problem = colon == std::string::npos ? what : what.substr(colon + 2);
        problems_.push_back({DeviceDbErrc::json_syntax, file_,
                             index_.line_of(position == 0 ? 0 : position - 1),
                             "JSON syntax error: " + problem});
        return false;
    }

    std::vector<Diagnostic> take_problems() { return std::move(problems_); }

  private:
    struct Frame {
        json* node;
        std::string pointer;
        std::string key;              // of the member being read, for objects
        bool discard_member = false;  // that member repeats a key: drop its value
    };

    int last_char_line() const { return index_.line_of(*consumed_ == 0 ? 0 : *consumed_ - 1); }

    // The lexer reads one character past a number; step back to its last digit.
    int number_line() const {
        std::size_t i = *consumed_ == 0 ? 0 : *consumed_ - 1;
        while (i > 0 && i < text_.size() &&
               std::string_view("0123456789+-.eE").find(text_[i]) == std::string_view::npos) {
            --i;
        }
        return index_.line_of(i);
    }

    // Places `value` in the current container; returns the stored node.
    json* place(json value, int line) {
        if (stack_.empty()) {
            out_.root = std::move(value);
            out_.lines[""] = line;
            return &out_.root;
        }
        Frame& top = stack_.back();
        if (top.node->is_array()) {
            const std::string pointer = child_pointer(top.pointer, top.node->size());
            out_.lines[pointer] = line;
            top.node->push_back(std::move(value));
            return &top.node->back();
        }
        if (top.discard_member) {  // a repeated key keeps its first value
            // Each dropped value gets a slot of its own: one may hold another
            // (a repeated key inside a repeated member), and the frames of
            // both point into them until they close.
            discarded_.push_back(std::move(value));
            return &discarded_.back();
        }
        json& slot = (*top.node)[top.key];
        slot = std::move(value);
        return &slot;
    }

    bool put(json value, int line) {
        place(std::move(value), line);
        return true;
    }

    bool open(json container) {
        std::string pointer;
        if (!stack_.empty()) {
            const Frame& top = stack_.back();
            if (top.node->is_array()) {
                pointer = child_pointer(top.pointer, top.node->size());
            } else {
                pointer = top.discard_member ? "#discarded" : child_pointer(top.pointer, top.key);
            }
        }
        json* node = place(std::move(container), last_char_line());
        stack_.push_back(Frame{node, std::move(pointer), {}});
        return true;
    }

    bool close() {
        stack_.pop_back();
        return true;
    }

    std::string_view text_;
    const std::string& file_;
    LineIndex index_;
    const std::size_t* consumed_;
    LocatedJson& out_;
    std::vector<Frame> stack_;
    std::deque<json> discarded_;  // stable addresses as it grows
    std::vector<Diagnostic> problems_;
};

}  // namespace

int LocatedJson::line_of(const std::string& pointer) const {
    std::string p = pointer;
    while (true) {
        auto it = lines.find(p);
        if (it != lines.end()) {
            return it->second;
        }
        auto slash = p.rfind('/');
        if (slash == std::string::npos) {
            return 1;
        }
        p.resize(slash);
    }
}

std::string child_pointer(const std::string& parent, std::string_view key) {
    std::string out = parent + "/";
    for (char c : key) {
        if (c == '~') {
            out += "~0";
        } else if (c == '/') {
            out += "~1";
        } else {
            out += c;
        }
    }
    return out;
}

std::string child_pointer(const std::string& parent, std::size_t index) {
    return parent + "/" + std::to_string(index);
}

Result<LocatedJson, std::vector<Diagnostic>> parse_located_json(std::string_view text,
                                                                const std::string& file) {
    work::add(work::Item::json_parsed);
    LocatedJson doc;
    std::size_t consumed = 0;
    Builder builder(text, file, &consumed, doc);
    CountingIterator first(text.data(), &consumed);
    CountingIterator last(text.data() + text.size(), &consumed);
    json::sax_parse(first, last, &builder, nlohmann::json::input_format_t::json, true, false);
    auto problems = builder.take_problems();
    if (!problems.empty()) {
        return fail(std::move(problems));
    }
    return doc;
}

}  // namespace kcache::device_db::detail
