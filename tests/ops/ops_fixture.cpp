#include "ops_fixture.hpp"

#include <stdlib.h>
#include <cstdlib>

#include <random>

namespace ops::test {

std::filesystem::path Ops::pocl_cache_;

void Ops::SetUpTestSuite() {
    // Before the first OpenCL call: PoCL reads POCL_CACHE_DIR once, and
    // kcache-jit inherits it.
    pocl_cache_ = kcache::test::make_temp_dir("ops-pocl");
    ::setenv("POCL_CACHE_DIR", pocl_cache_.c_str(), 1);
    // KCACHE_TEST_JIT_PATH: the helper of a staged tree (runs on another machine).
    const char* staged = std::getenv("KCACHE_TEST_JIT_PATH");
    ::setenv("KCACHE_JIT_PATH", staged && *staged ? staged : OPS_TEST_JIT_PATH, 1);
}

void Ops::TearDownTestSuite() {
    std::error_code ec;
    std::filesystem::remove_all(pocl_cache_, ec);
}

void Ops::SetUp() {
    TempDirTest::SetUp();
    for (const char* name : {"KCACHE_DISABLE", "KCACHE_READONLY", "KCACHE_PACKS", "KCACHE_CONFIG",
                             "KCACHE_MAX_SIZE", "KCACHE_JIT_TIMEOUT_MS"}) {
        ::unsetenv(name);
    }
    ::setenv("KCACHE_DIR", (dir() / "kcache").c_str(), 1);
    ::setenv("XDG_CONFIG_HOME", (dir() / "config").c_str(), 1);  // no user config file
}

Context Ops::device_context(const Options& options) {
    Context ctx = Context::create(options);
    EXPECT_TRUE(ctx.has_device()) << ctx.readiness().describe();
    EXPECT_EQ(ctx.readiness().backend, Backend::device) << ctx.readiness().describe();
    return ctx;
}

std::vector<float> random_values(std::size_t count, std::uint32_t seed, float lo, float hi) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> out(count);
    for (float& v : out) {
        v = dist(rng);
    }
    return out;
}

std::vector<float> rounded(DType dtype, const std::vector<float>& values) {
    std::vector<float> out = values;
    for (float& v : out) {
        v = kk::round_to(dtype, v);
    }
    return out;
}

void expect_within(const kk::Tolerance& tol, const std::vector<float>& got,
                   const std::vector<kk::RefValue>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    int misses = 0;
    for (std::size_t i = 0; i < got.size() && misses < 5; ++i) {
        if (!kk::within(tol, got[i], want[i])) {
            ++misses;
            ADD_FAILURE() << what << " [" << i << "]: got " << got[i] << ", want " << want[i].value
                          << " (scale " << want[i].scale << ")";
        }
    }
}

}  // namespace ops::test
