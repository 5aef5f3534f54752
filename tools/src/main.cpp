// kcache: the command-line tool (docs/design.md, "Interfaces"). Dispatches to one
// subcommand per file; every subcommand has --help and documented exit codes.

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli.hpp"
#include "probe.hpp"
#include "remote_cli.hpp"
#include "terminal_text.hpp"

namespace {

using namespace kcache::cli;

void print_overview(std::ostream& out) {
    out << "usage: kcache COMMAND [options]   (kcache COMMAND --help for details)\n\n"
           "A kernel compilation cache for OpenCL operator libraries.\n\ncommands:\n";
    for (const Command& c : all_commands()) {
        out << "  " << c.spec.name << std::string(10 - c.spec.name.size(), ' ') << c.spec.summary
            << "\n";
    }
    out << "\nThe user store is $KCACHE_DIR, else $XDG_CACHE_HOME/kcache, else ~/.cache/kcache.\n"
           "\nexit codes:\n"
        << kExitOk
        << "  1  done, but something failed that needs action (also: stdout could not be\n"
           "     written, an unexpected internal error)\n"
        << kExitUsage << kExitNotFound << kExitStore << kExitEnvironment;
}

// Runs the command named by `args`; may throw (main catches).
int dispatch(const std::vector<std::string>& args) {
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
    for (const Command& c : all_commands()) {
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
        // stdout carries data for programs (JSON, `get`'s bytes) only to a
        // pipe or file; on a terminal, and as text, it is escaped.
        const bool data = parsed->has("json") || c.spec.name == "get";
        if (!data || ::isatty(STDOUT_FILENO)) {
            escape_output(std::cout);
        }
        return c.run(*parsed);
    }
    return report(Exit::usage, args[0], "unknown command (see kcache --help)");
}

// The exit code after `code`, once everything written to stdout has reached
// it: a failed write (a full disk, a closed pipe) is an error, not success.
int finish_stdout(int code, std::string_view command) {
    std::cout.flush();
    if (std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout)) {
        return code;
    }
    // The failed write's errno is gone by now; one more byte says why.
    errno = 0;
    const bool probe_failed = ::write(STDOUT_FILENO, "\n", 1) < 0;
    const std::string why = probe_failed && errno != 0 ? std::strerror(errno) : "write failed";
    return report(Exit::action_needed, command, "cannot write the output: " + why);
}

}  // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    const std::string command = args.empty() ? "" : args[0];
    escape_output(std::cerr);  // messages only: nothing on stderr is data
    escape_library_log();
    int code = 0;
    // No exception may end the process with an abort: whatever escapes a
    // command is reported with its message and exit code 1.
    try {
        code = dispatch(args);
    } catch (const std::bad_alloc&) {
        code = report(Exit::action_needed, command, "out of memory");
    } catch (const std::exception& e) {
        code = report(Exit::action_needed, command, std::string("internal error: ") + e.what());
    } catch (...) {
        code = report(Exit::action_needed, command, "internal error");
    }
    return finish_stdout(code, command);
}
