#pragma once
// A PoCL context and a cache in the test's own directory, with kcache-jit
// from the build tree and PoCL's own kernel cache kept private.

#include "kcache/opencl.h"

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jit_support.hpp"
#include "temp_dir.hpp"

// The tests of the public API go through the header-only layer over the C
// API; the tests of the service's internals, whose headers declare the
// service's own C++ API, define KCACHE_TEST_INTERNAL_API to use that one.
#ifdef KCACHE_TEST_INTERNAL_API
#include "kcache/service/service_api.hpp"
#else
#include "kcache/kcache.hpp"
#endif

namespace kcache::test {

class CacheTest : public TempDirTest {
  protected:
    static void SetUpTestSuite();
    static void TearDownTestSuite();
    void SetUp() override;

    // A config for a store under dir()/`name`.
    Config config(const std::string& name = "store") const;
    // Opens a cache on config(`name`); fails the test when it cannot.
    std::unique_ptr<Cache> open(const std::string& name = "store") const;
    // Opens a cache on `config`; fails the test when it cannot.
    std::unique_ptr<Cache> open(const Config& config) const;

    static cl_platform_id platform_;
    static cl_device_id device_;
    static cl_context context_;
};

// A binary ocloc made from `source` with build `options` for a Tiger Lake GPU
// (which PoCL must reject), built in a directory under `dir`; empty when ocloc failed.
std::vector<std::uint8_t> tgllp_binary(const std::filesystem::path& dir, const std::string& source,
                                       const std::string& options = "");

// True when `o` records a miss of `rung` for `cause` whose detail contains `text`.
bool missed_with(const Outcome& o, Rung rung, MissCause cause, const std::string& text = "");

// A small caller kernel: `out[i] = in[i] * k + salt`.
std::string scale_source(int salt);

// A SourceRequest named "scale" for scale_source(`salt`), entry point "scale".
SourceRequest scale_request(int salt);

// Writes `text` to `dir`/xdg/kcache/config: the user's config file of a test
// whose XDG_CONFIG_HOME is `dir`/xdg.
void write_user_config(const std::filesystem::path& dir, const std::string& text);

// Sets each `var`=`value` of `settings` alone in the environment (then unsets
// it) and expects load_config to refuse it with an error that names `var`.
void expect_each_refused_naming_its_variable(
    std::initializer_list<std::pair<const char*, const char*>> settings);

// Runs kernel "scale" of `program` over 64 items; returns out[63] or NaN.
float run_scale(cl_context context, cl_device_id device, cl_program program, float k);

}  // namespace kcache::test
