#pragma once
// What kcache prints passes through service::printable on its way out, so
// that text from files, the environment or the network (a config line, a
// trusted comment, a compiler log, a server's answer, a stored kernel name)
// cannot drive the terminal: stderr always, stdout whenever it carries text.
// Output meant for programs (JSON, which escapes its own control characters,
// and `get`'s bytes) goes to a pipe or file byte for byte.

#include <ostream>

namespace kcache::cli {

// Makes `stream` escape what it writes (service::printable), line by line;
// idempotent. The filter lives until the process exits.
void escape_output(std::ostream& stream);

// Sends the library's diagnostics (kcache::logging: refused packs, servers
// marked down, quarantined entries) to stderr escaped, in the default
// sink's format ("kcache: warning: …").
void escape_library_log();

}  // namespace kcache::cli
