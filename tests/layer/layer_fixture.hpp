#pragma once
// Runs applications with and without the OpenCL layer (through the built
// `kcache run`), each test with its own store, PoCL cache and temporary
// directory; PoCL's own kernel cache is off unless a test turns it on.

#include <filesystem>
#include <string>
#include <vector>

#include "kcache/compiler/subprocess.hpp"
#include "temp_dir.hpp"

namespace kcache::test {

class LayerTest : public TempDirTest {
  protected:
    enum class With { driver, layer };

    std::filesystem::path store_dir() const { return dir() / "store"; }
    // Runs `program args…` (under `kcache run --` with the layer) with the
    // test's environment plus `env`; fails the test when it does not exit.
    compiler::RunResult run(With with, const std::string& program,
                            const std::vector<std::string>& args,
                            const std::vector<std::string>& env = {});
    // The layer's trace lines ("HIT user_store …") in `err`, without the prefix.
    static std::vector<std::string> trace_lines(const std::string& err);
    // The probe's value for `name` in `out` (its `name=value` lines; the
    // last one, "" when it printed none).
    static std::string value_of(const std::string& out, const std::string& name);
    // The store's layer counters ("hit 2\njit 0\n…"), "" when there are none.
    std::string counters() const;
    // Processes still alive whose environment names this test's store.
    std::vector<int> processes_of_this_store() const;
};

}  // namespace kcache::test
