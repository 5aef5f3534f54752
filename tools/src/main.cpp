// kcache: the command-line tool (docs/design.md, "Interfaces"). Dispatches to one
// subcommand per file; every subcommand has --help and documented exit codes.

#include <iostream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "probe.hpp"

namespace {

using namespace kcache::cli;

std::vector<Command> commands() {
    return {devices_command(), warm_command(),   prebuild_command(), get_command(),
            ls_command(),      stats_command(),  verify_command(),   explain_command(),
            gc_command(),      export_command(), import_command(),   doctor_command()};
}

void print_overview(std::ostream& out) {
    out << "usage: kcache COMMAND [options]   (kcache COMMAND --help for details)\n\n"
           "A kernel compilation cache for OpenCL operator libraries.\n\ncommands:\n";
    for (const Command& c : commands()) {
        out << "  " << c.spec.name << std::string(10 - c.spec.name.size(), ' ') << c.spec.summary
            << "\n";
    }
    out << "\nThe user store is $KCACHE_DIR, else $XDG_CACHE_HOME/kcache, else ~/.cache/kcache.\n"
           "\nexit codes:\n"
        << kExitOk << "  1  done, but something failed that needs action\n"
        << kExitUsage << kExitNotFound << kExitStore << kExitEnvironment;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        print_overview(std::cerr);
        return static_cast<int>(Exit::usage);
    }
    if (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
        print_overview(std::cout);
        return 0;
    }
    if (args.size() == 2 && args[0] == "devices" && args[1] == kProbeChildFlag) {
        return run_probe_child();
    }
    for (const Command& c : commands()) {
        if (c.spec.name != args[0]) {
            continue;
        }
        auto parsed = parse_args(std::span(args).subspan(1), c.spec);
        if (!parsed) {
            return report(Exit::usage, c.spec.name, parsed.error().message);
        }
        if (parsed->has("help")) {
            std::cout << help_text(c.spec);
            return 0;
        }
        return c.run(*parsed);
    }
    return report(Exit::usage, args[0], "unknown command (see kcache --help)");
}
