// The C API: statuses for every bad argument, never a crash; a real program
// through the ladder; binary bytes; stats.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstddef>
#include <fstream>
#include <string>
#include <vector>

#include "cache_fixture.hpp"
#include "kcache/kcache.h"

namespace kcache::test {
namespace {

class CApi : public CacheTest {
  protected:
    void SetUp() override {
        CacheTest::SetUp();
        ::setenv("KCACHE_DIR", (dir() / "store").c_str(), 1);
        ::setenv("KCACHE_JIT_PATH", jit_helper_path(), 1);
        ::unsetenv("KCACHE_DISABLE");
    }
};

TEST_F(CApi, NullArgumentsAreInvalidNotFatal) {
    EXPECT_EQ(kcache_open(nullptr), KCACHE_INVALID_ARGUMENT);
    EXPECT_STRNE(kcache_last_error(), "");
    kcache_cache* cache = nullptr;
    ASSERT_EQ(kcache_open(&cache), KCACHE_OK) << kcache_last_error();
    cl_program prog = reinterpret_cast<cl_program>(0x1);
    EXPECT_EQ(kcache_get_program(nullptr, context_, device_, "dot", nullptr, 0,
                                 KCACHE_MODE_BLOCKING, &prog, nullptr),
              KCACHE_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_get_program(cache, context_, device_, nullptr, nullptr, 0,
                                 KCACHE_MODE_BLOCKING, &prog, nullptr),
              KCACHE_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_get_program(cache, nullptr, device_, "dot", nullptr, 0, KCACHE_MODE_BLOCKING,
                                 &prog, nullptr),
              KCACHE_INVALID_ARGUMENT);
    EXPECT_EQ(prog, nullptr);  // cleared on failure
    EXPECT_EQ(kcache_get_program(cache, context_, device_, "dot", "dtype", 0, KCACHE_MODE_BLOCKING,
                                 &prog, nullptr),
              KCACHE_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_get_program(cache, context_, device_, "dot", nullptr, 0,
                                 static_cast<kcache_mode>(42), &prog, nullptr),
              KCACHE_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_get_program(cache, context_, device_, "nope", nullptr, 0, KCACHE_MODE_BLOCKING,
                                 &prog, nullptr),
              KCACHE_UNKNOWN_KERNEL);
    EXPECT_EQ(kcache_get_program_source(cache, context_, device_, nullptr, nullptr, nullptr, 0, 0,
                                        KCACHE_MODE_BLOCKING, &prog, nullptr),
              KCACHE_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_get_stats(cache, nullptr), KCACHE_INVALID_ARGUMENT);
    EXPECT_STREQ(kcache_status_name(KCACHE_TIMEOUT), "KCACHE_TIMEOUT");
    EXPECT_STREQ(kcache_status_name(static_cast<kcache_status>(99)), "KCACHE_UNKNOWN");
    kcache_close(cache);
    kcache_close(nullptr);
}

TEST_F(CApi, MalformedEnvironmentIsAConfigError) {
    ::setenv("KCACHE_JIT_TIMEOUT_MS", "soon", 1);
    kcache_cache* cache = nullptr;
    EXPECT_EQ(kcache_open(&cache), KCACHE_CONFIG_ERROR);
    EXPECT_EQ(cache, nullptr);
    EXPECT_NE(std::string(kcache_last_error()).find("KCACHE_JIT_TIMEOUT_MS"), std::string::npos);
    ::unsetenv("KCACHE_JIT_TIMEOUT_MS");
}

TEST_F(CApi, ProgramSourceBinaryAndStats) {
    kcache_cache* cache = nullptr;
    ASSERT_EQ(kcache_open(&cache), KCACHE_OK) << kcache_last_error();
    std::string src = scale_source(9);
    const char* entry = "scale";
    cl_program prog = nullptr;
    kcache_info info = KCACHE_INFO_INIT;
    ASSERT_EQ(kcache_get_program_source(cache, context_, device_, src.c_str(), "", &entry, 1, 0,
                                        KCACHE_MODE_BLOCKING, &prog, &info),
              KCACHE_OK)
        << kcache_last_error();
    EXPECT_EQ(info.rung, KCACHE_RUNG_JIT);
    EXPECT_FLOAT_EQ(run_scale(context_, device_, prog, 2.0f), 13.0f);
    clReleaseProgram(prog);

    ASSERT_EQ(kcache_get_program(cache, context_, device_, "dot", "dtype=bf16", 0,
                                 KCACHE_MODE_BLOCKING, &prog, &info),
              KCACHE_OK)
        << kcache_last_error();
    clReleaseProgram(prog);
    unsigned char* bytes = nullptr;
    size_t size = 0;
    ASSERT_EQ(kcache_get_binary(cache, context_, device_, "dot", "dtype=bf16", 0,
                                KCACHE_MODE_FAIL_FAST, &bytes, &size),
              KCACHE_OK)
        << kcache_last_error();
    EXPECT_GT(size, 0u);
    std::free(bytes);

    kcache_stats unset{};
    EXPECT_EQ(kcache_get_stats(cache, &unset), KCACHE_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kcache_last_error()).find("struct_size"), std::string::npos);
    kcache_stats st = KCACHE_STATS_INIT;
    ASSERT_EQ(kcache_get_stats(cache, &st), KCACHE_OK);
    EXPECT_EQ(st.jit_compiles, 2u);
    EXPECT_EQ(st.entries, 2u);
    EXPECT_EQ(st.in_process_hits, 1u);
    kcache_close(cache);
}

// A caller built against an older, shorter kcache_info gets only the fields
// that fit; the bytes after them are left alone.
TEST_F(CApi, ExtensibleStructsAreFilledOnlyAsFarAsTheirSize) {
    kcache_cache* cache = nullptr;
    ASSERT_EQ(kcache_open(&cache), KCACHE_OK) << kcache_last_error();
    cl_program prog = nullptr;
    kcache_info zero{};
    EXPECT_EQ(kcache_get_program(cache, context_, device_, "dot", nullptr, 0, KCACHE_MODE_FAIL_FAST,
                                 &prog, &zero),
              KCACHE_INVALID_ARGUMENT);
    kcache_info shorter = KCACHE_INFO_INIT;
    shorter.struct_size = offsetof(kcache_info, total_us);  // rung only
    shorter.total_us = 12345;
    EXPECT_EQ(kcache_get_program(cache, context_, device_, "dot", nullptr, 0, KCACHE_MODE_FAIL_FAST,
                                 &prog, &shorter),
              KCACHE_NOT_CACHED);
    EXPECT_EQ(shorter.rung, KCACHE_RUNG_NONE);
    EXPECT_EQ(shorter.total_us, 12345u);
    kcache_stats two = KCACHE_STATS_INIT;
    two.struct_size = offsetof(kcache_stats, evictions);  // entries, raw_bytes
    two.evictions = 777;
    ASSERT_EQ(kcache_get_stats(cache, &two), KCACHE_OK);
    EXPECT_EQ(two.evictions, 777u);
    kcache_close(cache);
}

TEST_F(CApi, VersionMatchesTheHeader) {
    EXPECT_STREQ(kcache_version(), KCACHE_VERSION_STRING);
    EXPECT_STREQ(kcache::version(), KCACHE_VERSION_STRING);
}

void collect(kcache_log_level level, const char* message, void* user) {
    static_cast<std::vector<std::string>*>(user)->push_back(
        std::string(level == KCACHE_LOG_ERROR ? "error: " : "warning: ") + message);
}

// Diagnostics reach the caller's handler instead of stderr: a damaged pack
// named by KCACHE_PACKS is skipped with a warning.
TEST_F(CApi, LogHandlerReceivesDiagnostics) {
    std::vector<std::string> lines;
    kcache_set_log_handler(collect, &lines);
    const auto bad = dir() / "bad.kcpack";
    { std::ofstream(bad) << "not a pack"; }
    ::setenv("KCACHE_PACKS", bad.c_str(), 1);
    kcache_cache* cache = nullptr;
    EXPECT_EQ(kcache_open(&cache), KCACHE_OK) << kcache_last_error();
    ::unsetenv("KCACHE_PACKS");
    // Packs are opened by the first request that reaches them: a user-store miss.
    EXPECT_TRUE(lines.empty()) << lines.front();
    cl_program prog = nullptr;
    EXPECT_EQ(kcache_get_program(cache, context_, device_, "dot", nullptr, 0, KCACHE_MODE_FAIL_FAST,
                                 &prog, nullptr),
              KCACHE_NOT_CACHED);
    kcache_close(cache);
    kcache_set_log_handler(nullptr, nullptr);
    ASSERT_FALSE(lines.empty());
    EXPECT_NE(lines.front().find("warning: skipping pack " + bad.string()), std::string::npos)
        << lines.front();
}

TEST_F(CApi, DisabledTellsTheCallerToBuildItself) {
    ::setenv("KCACHE_DISABLE", "1", 1);
    kcache_cache* cache = nullptr;
    ASSERT_EQ(kcache_open(&cache), KCACHE_OK) << kcache_last_error();
    cl_program prog = nullptr;
    EXPECT_EQ(kcache_get_program(cache, context_, device_, "dot", nullptr, 0, KCACHE_MODE_BLOCKING,
                                 &prog, nullptr),
              KCACHE_DISABLED);
    kcache_close(cache);
}

}  // namespace
}  // namespace kcache::test
