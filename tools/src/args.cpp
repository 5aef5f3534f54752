#include "args.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "kcache/config/quantity.hpp"

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
                                                                        std::uint64_t min,
                                                                        std::uint64_t max) const {
    auto text = value(name);
    if (!text) {
        return std::optional<std::uint64_t>{};
    }
    auto v = parse_u64(*text);
    if (!v && !text->empty() && text->find_first_not_of("0123456789") == std::string::npos) {
        v = UINT64_MAX;  // too many digits: out of range below
    }
    if (!v) {
        return fail(usage("--" + std::string(name) + ": not a whole number: '" + *text + "'"));
    }
    if (*v < min || *v > max) {
        return fail(usage("--" + std::string(name) + ": must be between " + std::to_string(min) +
                          " and " + std::to_string(max) + ", got " + *text));
    }
    return std::optional<std::uint64_t>{*v};
}

Result<std::optional<std::chrono::milliseconds>, UsageError> ParsedArgs::duration_value(
    std::string_view name) const {
    auto text = value(name);
    if (!text) {
        return std::optional<std::chrono::milliseconds>{};
    }
    auto ms = service::parse_duration(*text, service::BareUnit::seconds);
    if (!ms) {
        return fail(usage("--" + std::string(name) + ": " + ms.error().message));
    }
    if (ms->count() == 0) {
        return fail(
            usage("--" + std::string(name) + ": must be longer than zero, got '" + *text + "'"));
    }
    return std::optional<std::chrono::milliseconds>{*ms};
}

Result<std::optional<std::uint64_t>, UsageError> ParsedArgs::size_value(
    std::string_view name) const {
    auto text = value(name);
    if (!text) {
        return std::optional<std::uint64_t>{};
    }
    auto bytes = service::parse_size(*text);
    if (!bytes) {
        return fail(usage("--" + std::string(name) + ": " + bytes.error().message));
    }
    return std::optional<std::uint64_t>{*bytes};
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
