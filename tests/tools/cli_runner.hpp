#pragma once
// Runs the built `kcache` binary (path from the build: KCACHE_TEST_CLI_PATH)
// as a child process with its own store directory, and captures its output.

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "temp_dir.hpp"

namespace kcache::test {

struct CliRun {
    int code = -1;  // exit code; -1 when it did not exit normally
    std::string out;
    std::string err;
    // stdout parsed as JSON (fails the test when it does not parse).
    nlohmann::json json() const;
};

// Each test gets a temporary dir(); KCACHE_DIR is store_dir(), PoCL's own
// kernel cache is under dir() too.
class CliTest : public TempDirTest {
  protected:
    std::filesystem::path store_dir() const { return dir() / "store"; }
    // Runs `kcache args…` with the test's environment plus `env` ("NAME=value").
    CliRun kcache(const std::vector<std::string>& args, const std::vector<std::string>& env = {});
    // Same, with kcache's stdout sent to the file `out` (e.g. /dev/full)
    // through a shell redirection; the result's `out` is then empty.
    CliRun kcache_to(const std::filesystem::path& out, const std::vector<std::string>& args,
                     const std::vector<std::string>& env = {});

    // How long one kcache run may take before it is killed and the test
    // fails (tests of inputs that once hung set a short one).
    std::chrono::seconds cli_deadline_ = std::chrono::minutes(3);

    // Runs `program args…` as kcache() runs the CLI (same defaults, same bound).
    CliRun run_cli(const std::string& program, const std::vector<std::string>& args,
                   const std::vector<std::string>& env);
};

}  // namespace kcache::test
