#pragma once
// The backends the remote benchmark measures side by side: one row each in
// kBenchBackends (remote_backends.cpp). A row starts its server on loopback
// for the whole run and says, as KCACHE_* / AWS_* environment settings, how a
// node reaches it, and how a node reaches a server of its kind that never
// answers. Adding a backend to the benchmark is one start function, one
// hanging function and one row.

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kcache::bench {

// A running backend.
struct Remote {
    std::string name;
    // NAME=value settings of a node using it: KCACHE_REMOTE and the
    // backend's own (an s3:// URL's endpoint attribute, AWS_ACCESS_KEY_ID, …).
    std::vector<std::string> env;
    std::shared_ptr<void> server;  // keeps the server process running
    // The server's own time per GET so far, in µs, where its log says it
    // (s3rver's); empty for the others.
    std::function<std::vector<double>()> server_gets_us;
};

struct BenchBackend {
    const char* name;
    // Starts the server in `dir`; nullopt (having said why on stderr) when it cannot.
    std::optional<Remote> (*start)(const std::filesystem::path& dir);
    // The settings of a node whose server of this kind is `host_port`
    // ("127.0.0.1:PORT"), a socket that accepts and never answers.
    std::vector<std::string> (*hanging)(const std::string& host_port);
};

// Every row; `only` (names separated by commas, empty: all) picks some.
std::vector<BenchBackend> bench_backends(const std::string& only);

// Sets the `env` settings in this process until the scope ends (for the
// in-process measurements; child processes get them on their command line).
class ScopedEnv {
  public:
    explicit ScopedEnv(const std::vector<std::string>& env);
    ~ScopedEnv();
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

  private:
    std::vector<std::pair<std::string, std::optional<std::string>>> old_;
};

}  // namespace kcache::bench
