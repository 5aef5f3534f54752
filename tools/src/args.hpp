#pragma once
// The CLI's own small argument parser: long options (`--name value`,
// `--name=value`), flags, positionals, and typed value readers that report
// usage errors as text ("--jobs: must be at least 1, got 0").

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kcache/common/result.hpp"

namespace kcache::cli {

// Whether an option takes a value.
enum class Arity { flag, value };

// One option a subcommand accepts.
struct OptionSpec {
    std::string name;  // without the leading "--"
    Arity arity = Arity::flag;
    std::string metavar;  // shown in help for Arity::value ("N", "FILE")
    std::string help;     // one line
};

// Everything a subcommand's --help shows and its parser accepts.
struct CommandSpec {
    std::string name;
    std::string usage;    // after "kcache NAME ", e.g. "[options] KEY"
    std::string summary;  // one line, also in `kcache --help`
    std::string details;  // free text after the options
    std::vector<OptionSpec> options;
    std::size_t min_positionals = 0;
    std::size_t max_positionals = 0;
    std::string exit_codes;  // the codes this command returns, one per line
};

// A usage error: what was wrong, for "kcache NAME: <message>".
struct UsageError {
    std::string message;
};

// The parsed command line of one subcommand.
class ParsedArgs {
  public:
    // True when flag or option `name` was given.
    bool has(std::string_view name) const;
    // The value of option `name`, or nullopt when it was not given.
    std::optional<std::string> value(std::string_view name) const;
    const std::vector<std::string>& positionals() const { return positionals_; }

    // Usage error when more than one of `names` was given.
    Status<UsageError> exclusive(std::initializer_list<std::string_view> names) const;

    // Option `name` as an integer >= `min`; nullopt when absent.
    Result<std::optional<std::uint64_t>, UsageError> uint_value(std::string_view name,
                                                                std::uint64_t min) const;
    // Option `name` as a duration ("90s", "5m", "2h", "7d", "1500ms"; bare
    // numbers are seconds) greater than zero; nullopt when absent.
    Result<std::optional<std::chrono::milliseconds>, UsageError> duration_value(
        std::string_view name) const;
    // Option `name` as a size in bytes ("512K", "100M", "2G", bare bytes).
    Result<std::optional<std::uint64_t>, UsageError> size_value(std::string_view name) const;
    // Option `name` split at commas (empty items dropped); empty when absent.
    std::vector<std::string> list_value(std::string_view name) const;

  private:
    friend Result<ParsedArgs, UsageError> parse_args(std::span<const std::string>,
                                                     const CommandSpec&);
    std::map<std::string, std::string, std::less<>> values_;  // flags map to ""
    std::vector<std::string> positionals_;
};

// Parses `args` (after the subcommand name) against `spec`. `--help`/`-h` is
// recorded as flag "help" and ends checking. Errors: unknown option, missing
// value, a value given to a flag, an option given twice, positional count.
Result<ParsedArgs, UsageError> parse_args(std::span<const std::string> args,
                                          const CommandSpec& spec);

// The full --help text of `spec` (usage, options, details, exit codes).
std::string help_text(const CommandSpec& spec);

}  // namespace kcache::cli
