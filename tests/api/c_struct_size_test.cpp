// The C API's structs through the shared library, as callers built against
// other headers send them: a shorter struct (an older caller) gets defaults
// for the fields it lacks, and its output fields are filled only as far as
// they fit; a longer one (a newer caller) is served when the fields this
// library does not know are zero and refused when they are not.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "c_fixture.hpp"

namespace kcache::test {
namespace {

using CApiStructSize = CApiTest;

// What a newer header might declare: the same struct and one more field.
template <class T>
struct Newer {
    T known;
    std::uint64_t future;
};

constexpr std::size_t kernel_end = offsetof(kcache_kernel_request, kernel) + sizeof(const char*);
constexpr std::size_t source_end = offsetof(kcache_source_request, source) + sizeof(const char*);

// A request that carries only `kernel`: params, deadline and mode take their
// defaults (blocking: it compiles); its info, of 0.2's size plus nothing,
// is filled and a field past a shorter info is left alone.
TEST_F(CApiStructSize, AShorterKernelRequestGetsTheDefaultsItLacks) {
    kcache_kernel_request r = KCACHE_KERNEL_REQUEST_INIT;
    fill_tail(r, kernel_end, 0xAB);  // garbage past its size is never read
    r.kernel = "dot";
    r.struct_size = kernel_end;
    kcache_info info = KCACHE_INFO_INIT;
    info.struct_size = offsetof(kcache_info, total_us);  // rung only
    info.total_us = 12345;
    cl_program p = nullptr;
    ASSERT_EQ(kcache_get_kernel_program(cache(), context_, device_, &r, &p, &info),
              KCACHE_STATUS_OK)
        << kcache_last_error();
    EXPECT_NE(p, nullptr);
    clReleaseProgram(p);
    EXPECT_EQ(info.rung, KCACHE_RUNG_JIT);
    EXPECT_EQ(info.total_us, 12345u);
    // One field short of `kernel`: refused.
    r.struct_size = kernel_end - 1;
    EXPECT_EQ(kcache_get_kernel_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
}

TEST_F(CApiStructSize, ALongerKernelRequestIsServedWhenItsUnknownFieldsAreZero) {
    Newer<kcache_kernel_request> r{};
    r.known = KCACHE_KERNEL_REQUEST_INIT;
    r.known.struct_size = sizeof r;
    r.known.kernel = "dot";
    r.known.mode = KCACHE_MODE_FAIL_FAST;
    Newer<kcache_info> info{};
    info.known = KCACHE_INFO_INIT;
    info.known.struct_size = sizeof info;
    info.future = 4242;
    cl_program p = nullptr;
    EXPECT_EQ(kcache_get_kernel_program(cache(), context_, device_, &r.known, &p, &info.known),
              KCACHE_STATUS_NOT_CACHED)
        << kcache_last_error();
    EXPECT_EQ(info.known.rung, KCACHE_RUNG_NONE);
    EXPECT_EQ(info.future, 4242u);  // an output field this library does not know: untouched
    r.future = 1;
    EXPECT_EQ(kcache_get_kernel_program(cache(), context_, device_, &r.known, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::string(kcache_last_error()).find("does not know"), std::string::npos)
        << kcache_last_error();
    unsigned char* bytes = nullptr;
    size_t size = 0;
    EXPECT_EQ(
        kcache_get_kernel_binary(cache(), context_, device_, &r.known, &bytes, &size, nullptr),
        KCACHE_STATUS_INVALID_ARGUMENT);
    // A size no struct of this API has is garbage, not a newer caller.
    r.known.struct_size = 1u << 20;
    EXPECT_EQ(kcache_get_kernel_program(cache(), context_, device_, &r.known, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
}

TEST_F(CApiStructSize, SourceRequestsShorterAndLonger) {
    kcache_source_request shorter = KCACHE_SOURCE_REQUEST_INIT;
    fill_tail(shorter, source_end, 0xCD);
    shorter.source = kScaleSource;
    shorter.struct_size = source_end;  // options, entry points (all), mode… default
    cl_program p = nullptr;
    ASSERT_EQ(kcache_get_source_program(cache(), context_, device_, &shorter, &p, nullptr),
              KCACHE_STATUS_OK)
        << kcache_last_error();
    clReleaseProgram(p);
    Newer<kcache_source_request> longer{};
    longer.known = KCACHE_SOURCE_REQUEST_INIT;
    longer.known.struct_size = sizeof longer;
    longer.known.source = kScaleSource;
    longer.known.name = "scale";
    longer.known.mode = KCACHE_MODE_FAIL_FAST;
    kcache_info info = KCACHE_INFO_INIT;
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &longer.known, &p, &info),
              KCACHE_STATUS_OK)
        << kcache_last_error();
    EXPECT_EQ(info.rung, KCACHE_RUNG_IN_PROCESS);
    clReleaseProgram(p);
    longer.future = 7;
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &longer.known, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
}

// The new binary entry point fills a kcache_info, and its bytes are freed
// with kcache_free; the 0.2 entry point answers the same bytes.
TEST_F(CApiStructSize, KernelBinaryFillsInfoAndTheOldEntryPointAgrees) {
    kcache_kernel_request r = KCACHE_KERNEL_REQUEST_INIT;
    r.kernel = "dot";
    r.params = "dtype=f16";
    unsigned char* bytes = nullptr;
    size_t size = 0;
    kcache_info info = KCACHE_INFO_INIT;
    ASSERT_EQ(kcache_get_kernel_binary(cache(), context_, device_, &r, &bytes, &size, &info),
              KCACHE_STATUS_OK)
        << kcache_last_error();
    EXPECT_GT(size, 0u);
    EXPECT_EQ(info.rung, KCACHE_RUNG_JIT);
    unsigned char* again = nullptr;
    size_t again_size = 0;
    ASSERT_EQ(kcache_get_binary(cache(), context_, device_, "dot", "dtype=f16", 0,
                                KCACHE_MODE_FAIL_FAST, &again, &again_size),
              KCACHE_OK)
        << kcache_last_error();
    EXPECT_EQ(std::string(reinterpret_cast<char*>(bytes), size),
              std::string(reinterpret_cast<char*>(again), again_size));
    kcache_free(bytes);
    kcache_free(again);
}

// kcache_stats: a shorter one gets only the counters that fit; a longer one
// gets every counter and its unknown tail is left alone.
TEST_F(CApiStructSize, StatsShorterAndLonger) {
    kcache_stats two = KCACHE_STATS_INIT;
    two.struct_size = offsetof(kcache_stats, evictions);  // entries, raw_bytes
    two.evictions = 777;
    ASSERT_EQ(kcache_get_stats(cache(), &two), KCACHE_STATUS_OK);
    EXPECT_EQ(two.evictions, 777u);
    Newer<kcache_stats> longer{};
    longer.known = KCACHE_STATS_INIT;
    longer.known.struct_size = sizeof longer;
    longer.future = 99;
    ASSERT_EQ(kcache_get_stats(cache(), &longer.known), KCACHE_STATUS_OK);
    EXPECT_EQ(longer.future, 99u);
}

}  // namespace
}  // namespace kcache::test
