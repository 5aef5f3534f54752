// Placeholder bodies replaced as the service lands (warm, explain).
#include "cli.hpp"

namespace kcache::cli {

Command warm_command() {
    return {{"warm",
             "[options]",
             "build missing kernel binaries for the devices present",
             "",
             {},
             0,
             0,
             std::string(kExitOk)},
            [](const ParsedArgs&) {
                return report(Exit::environment, "warm", "not available in this build yet");
            }};
}

Command explain_command() {
    return {{"explain",
             "[options]",
             "why a lookup misses: per-field diff against nearest entries",
             "",
             {},
             0,
             0,
             std::string(kExitOk)},
            [](const ParsedArgs&) {
                return report(Exit::environment, "explain", "not available in this build yet");
            }};
}

}  // namespace kcache::cli
