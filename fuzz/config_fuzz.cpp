// The config file (`key = value` lines): the fuzzed bytes are the file named
// by KCACHE_CONFIG, with no other KCACHE_* variable set, and load_config()
// resolves the configuration from it.
//
// Invariants: nothing crashes, throws or hangs; an error names the file and a
// line; an accepted configuration has a directory, a positive size bound and
// a JIT timeout between 1 ms and 24 h, and every setting it reports comes
// from the file or a default.

#include <cstdlib>

#include "fuzz_support.hpp"
#include "kcache/service/service_api.hpp"

namespace {

using kcache::fuzz::check;
namespace fs = std::filesystem;

const fs::path& config_path() {
    static const fs::path path = [] {
        fs::path p = kcache::fuzz::scratch_dir() / "config";
        for (const char* name :
             {"KCACHE_DIR", "KCACHE_MAX_SIZE", "KCACHE_JIT_TIMEOUT_MS", "KCACHE_DISABLE",
              "KCACHE_READONLY", "KCACHE_PACKS", "KCACHE_JIT_PATH", "KCACHE_DEVICE_DB", "TMPDIR"}) {
            ::unsetenv(name);
        }
        ::setenv("KCACHE_CONFIG", p.c_str(), 1);
        ::setenv("HOME", kcache::fuzz::scratch_dir().c_str(), 1);
        return p;
    }();
    return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const fs::path& path = config_path();
    kcache::fuzz::write_file(path, {reinterpret_cast<const char*>(data), size});
    kcache::Config config;
    std::string error;
    if (!kcache::load_config(config, error)) {
        check(error.rfind(path.string() + ":", 0) == 0,
              "a config error does not start with file:line: " + error);
        return 0;
    }
    check(!config.dir.empty(), "an accepted configuration has no directory");
    check(config.max_bytes > 0, "an accepted configuration has a zero size bound");
    check(config.jit_timeout.count() >= 1 && config.jit_timeout.count() <= 86'400'000,
          "an accepted JIT timeout is out of range");
    for (const auto& [key, origin] : config.origins) {
        check(origin.second != kcache::Source::environment, "a setting came from the environment");
    }
    return 0;
}
