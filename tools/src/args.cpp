#include "args.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

namespace kcache::cli {
namespace {

const OptionSpec* find_option(const CommandSpec& spec, std::string_view name) {
    for (const OptionSpec& o : spec.options) {
        if (o.name == name) {
            return &o;
        }
    }
    return nullptr;
}

UsageError usage(std::string message) {
    return UsageError{std::move(message)};
}

// Parses a non-negative decimal integer filling all of `text`.
std::optional<std::uint64_t> parse_u64(std::string_view text) {
    std::uint64_t v = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec != std::errc{} || ptr != end) {
        return std::nullopt;
    }
    return v;
}

// Splits "90s" into (90, "s"); nullopt when there are no leading digits.
std::optional<std::pair<std::uint64_t, std::string_view>> number_and_unit(std::string_view text) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') {
        ++digits;
    }
    auto n = parse_u64(text.substr(0, digits));
    if (!n) {
        return std::nullopt;
    }
    return std::pair{*n, text.substr(digits)};
}

}  // namespace

bool ParsedArgs::has(std::string_view name) const {
    return values_.find(name) != values_.end();
}

std::optional<std::string> ParsedArgs::value(std::string_view name) const {
    auto it = values_.find(name);
    if (it == values_.end()) {
        return std::nullopt;
    }
    return it->second;
}

Status<UsageError> ParsedArgs::exclusive(std::initializer_list<std::string_view> names) const {
    std::vector<std::string> given;
    for (std::string_view n : names) {
        if (has(n)) {
            given.push_back("--" + std::string(n));
        }
    }
    if (given.size() > 1) {
        return fail(usage(given[0] + " and " + given[1] + " cannot be used together"));
    }
    return Ok{};
}

Result<std::optional<std::uint64_t>, UsageError> ParsedArgs::uint_value(std::string_view name,
                                                                        std::uint64_t min) const {
    auto text = value(name);
    if (!text) {
        return std::optional<std::uint64_t>{};
    }
    auto v = parse_u64(*text);
    if (!v) {
        return fail(usage("--" + std::string(name) + ": not a whole number: '" + *text + "'"));
    }
    if (*v < min) {
        return fail(usage("--" + std::string(name) + ": must be at least " + std::to_string(min) +
                          ", got " + *text));
    }
    return std::optional<std::uint64_t>{*v};
}

Result<std::optional<std::chrono::milliseconds>, UsageError> ParsedArgs::duration_value(
    std::string_view name) const {
    using std::chrono::milliseconds;
    auto text = value(name);
    if (!text) {
        return std::optional<milliseconds>{};
    }
    static const std::pair<std::string_view, std::uint64_t> units[] = {
        {"", 1000}, {"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}, {"d", 86'400'000}};
    auto parts = number_and_unit(*text);
    if (parts && parts->first > 0) {
        for (const auto& [unit, factor] : units) {
            if (parts->second == unit) {
                return std::optional<milliseconds>{milliseconds(parts->first * factor)};
            }
        }
    }
    return fail(usage("--" + std::string(name) + ": not a positive duration: '" + *text +
                      "' (examples: 90s, 5m, 2h, 7d)"));
}

Result<std::optional<std::uint64_t>, UsageError> ParsedArgs::size_value(
    std::string_view name) const {
    auto text = value(name);
    if (!text) {
        return std::optional<std::uint64_t>{};
    }
    static const std::pair<std::string_view, std::uint64_t> units[] = {
        {"", 1}, {"K", 1ull << 10}, {"M", 1ull << 20}, {"G", 1ull << 30}, {"T", 1ull << 40}};
    if (auto parts = number_and_unit(*text)) {
        for (const auto& [unit, factor] : units) {
            if (parts->second == unit) {
                return std::optional<std::uint64_t>{parts->first * factor};
            }
        }
    }
    return fail(usage("--" + std::string(name) + ": not a size: '" + *text +
                      "' (examples: 500M, 2G, 4096)"));
}

std::vector<std::string> ParsedArgs::list_value(std::string_view name) const {
    std::vector<std::string> items;
    std::istringstream in(value(name).value_or(""));
    for (std::string item; std::getline(in, item, ',');) {
        if (!item.empty()) {
            items.push_back(item);
        }
    }
    return items;
}

Result<ParsedArgs, UsageError> parse_args(std::span<const std::string> args,
                                          const CommandSpec& spec) {
    ParsedArgs parsed;
    bool options_done = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (options_done || arg.size() < 2 || arg[0] != '-') {
            parsed.positionals_.push_back(arg);
            continue;
        }
        if (arg == "--") {
            options_done = true;
            continue;
        }
        if (arg == "-h" || arg == "--help") {
            parsed.values_["help"] = "";
            return parsed;
        }
        if (arg.rfind("--", 0) != 0) {
            return fail(usage("unknown option '" + arg + "' (see --help)"));
        }
        const std::size_t eq = arg.find('=');
        const std::string name = arg.substr(2, eq == std::string::npos ? eq : eq - 2);
        const OptionSpec* option = find_option(spec, name);
        if (!option) {
            return fail(usage("unknown option '--" + name + "' (see --help)"));
        }
        if (parsed.has(name)) {
            return fail(usage("--" + name + " given twice"));
        }
        if (option->arity == Arity::flag) {
            if (eq != std::string::npos) {
                return fail(usage("--" + name + " takes no value"));
            }
            parsed.values_[name] = "";
        } else if (eq != std::string::npos) {
            parsed.values_[name] = arg.substr(eq + 1);
        } else if (i + 1 < args.size()) {
            parsed.values_[name] = args[++i];
        } else {
            return fail(usage("--" + name + " needs a value (" + option->metavar + ")"));
        }
    }
    const std::size_t n = parsed.positionals_.size();
    if (n < spec.min_positionals) {
        return fail(usage("missing argument (usage: kcache " + spec.name + " " + spec.usage + ")"));
    }
    if (n > spec.max_positionals) {
        return fail(usage("unexpected argument '" + parsed.positionals_[spec.max_positionals] +
                          "' (usage: kcache " + spec.name + " " + spec.usage + ")"));
    }
    return parsed;
}

std::string help_text(const CommandSpec& spec) {
    std::ostringstream out;
    out << "usage: kcache " << spec.name << " " << spec.usage << "\n\n" << spec.summary << "\n";
    out << "\noptions:\n";
    std::vector<std::pair<std::string, std::string>> rows;
    for (const OptionSpec& o : spec.options) {
        std::string left = "--" + o.name;
        if (o.arity == Arity::value) {
            left += " " + o.metavar;
        }
        rows.emplace_back(left, o.help);
    }
    rows.emplace_back("-h, --help", "show this help and exit");
    std::size_t width = 0;
    for (const auto& row : rows) {
        width = std::max(width, row.first.size());
    }
    for (const auto& [left, help] : rows) {
        out << "  " << left << std::string(width - left.size() + 2, ' ') << help << "\n";
    }
    if (!spec.details.empty()) {
        out << "\n" << spec.details;
        if (spec.details.back() != '\n') {
            out << "\n";
        }
    }
    out << "\nexit codes:\n" << spec.exit_codes;
    return out.str();
}

}  // namespace kcache::cli
