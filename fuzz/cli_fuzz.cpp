// CLI argument vectors: the first byte picks one of kcache's real
// subcommands, the rest is its argument vector (arguments separated by NUL
// bytes). The vector is parsed against that command's own option table, as
// main() does, and every option value is then read the way a command may
// read it: as a whole number, a duration, a size and a list. Running the
// commands themselves is left out: they compile, probe devices and write.
//
// Invariants: nothing crashes, throws or hangs; a parse that succeeds keeps
// the positional count within the command's bounds; a whole number is at
// least its minimum; an accepted duration is positive and an accepted
// duration or size is never smaller than the number written (a value that
// wrapped around would be); `--help` output names the command.

#include <charconv>

#include "cli.hpp"
#include "fuzz_support.hpp"

namespace {

using namespace kcache::cli;
using kcache::fuzz::check;

// The number the text of an option starts with; 0 when none or too large.
std::uint64_t leading_number(const std::string& text) {
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc{} && ptr != text.data() ? v : 0;
}

void read_values(const ParsedArgs& args, const OptionSpec& option) {
    const std::string& name = option.name;
    const auto text = args.value(name);
    const std::uint64_t n = text ? leading_number(*text) : 0;
    for (std::uint64_t min : {0, 1}) {
        auto v = args.uint_value(name, min);
        check(!v || !*v || **v >= min, "--" + name + ": a whole number below its minimum");
    }
    auto d = args.duration_value(name);
    if (d && *d) {
        check((*d)->count() > 0, "--" + name + ": an accepted duration is not positive");
        check(static_cast<std::uint64_t>((*d)->count()) >= n,
              "--" + name + ": an accepted duration is smaller than its number: " + *text);
    }
    auto s = args.size_value(name);
    if (s && *s) {
        check(**s >= n, "--" + name + ": an accepted size is smaller than its number: " + *text);
    }
    for (const std::string& item : args.list_value(name)) {
        check(!item.empty(), "--" + name + ": an empty list item");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const std::vector<Command> commands = all_commands();
    kcache::fuzz::Bytes in(data, size);
    const Command& command = commands[in.u8() % commands.size()];
    std::vector<std::string> argv;
    const std::string rest = in.rest();
    for (std::size_t start = 0; start < rest.size();) {
        std::size_t end = rest.find('\0', start);
        end = end == std::string::npos ? rest.size() : end;
        argv.push_back(rest.substr(start, end - start));
        start = end + 1;
    }
    const CommandSpec& spec = command.spec;
    auto parsed = parse_args(argv, spec);
    if (!parsed) {
        check(!parsed.error().message.empty(), "a usage error without a message");
        return 0;
    }
    if (parsed->has("help")) {
        check(help_text(spec).find("kcache " + spec.name) != std::string::npos,
              "--help does not name the command");
        return 0;
    }
    const std::size_t positionals = parsed->positionals().size();
    check(positionals >= spec.min_positionals && positionals <= spec.max_positionals,
          "a parse accepted a positional count outside the command's bounds");
    for (const OptionSpec& option : spec.options) {
        if (option.arity == Arity::value) {
            read_values(*parsed, option);
        } else {
            check(!parsed->has(option.name) || parsed->value(option.name)->empty(),
                  "--" + option.name + ": a flag with a value");
        }
    }
    if (spec.options.size() >= 2) {
        (void)parsed->exclusive({spec.options[0].name, spec.options[1].name});
    }
    return 0;
}
