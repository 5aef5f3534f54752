// The C API's outcome object, the requests that answer with one (_v2), the
// open from a configuration object, drain, the log handler's release and
// the enumerations' names, through the shared library: NULL, zero, shorter
// and longer struct_size included.

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "c_fixture.hpp"

namespace kcache::test {
namespace {

using CApiOutcome = CApiTest;

// Frees the outcome it holds.
struct OutcomeOwner {
    kcache_outcome* o = nullptr;
    ~OutcomeOwner() { kcache_outcome_free(o); }
};

TEST(CApiOutcomeNull, AccessorsOfNoOutcomeAnswerNeutralValues) {
    EXPECT_EQ(kcache_outcome_status(nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_outcome_rung(nullptr), KCACHE_RUNG_NONE);
    EXPECT_STREQ(kcache_outcome_message(nullptr), "");
    EXPECT_STREQ(kcache_outcome_key(nullptr), "");
    EXPECT_EQ(kcache_outcome_total_us(nullptr), 0u);
    EXPECT_EQ(kcache_outcome_compile_us(nullptr), 0u);
    EXPECT_EQ(kcache_outcome_resident(nullptr), 0);
    EXPECT_EQ(kcache_outcome_miss_count(nullptr), 0u);
    EXPECT_EQ(kcache_outcome_miss(nullptr, 0, nullptr, nullptr, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    kcache_outcome_free(nullptr);
    EXPECT_EQ(kcache_drain(nullptr, 10), KCACHE_STATUS_INVALID_ARGUMENT);
}

TEST(CApiOutcomeNull, EnumerationsHaveTheirCxxNames) {
    EXPECT_STREQ(kcache_enum_name(KCACHE_ENUM_STATUS, KCACHE_STATUS_OK), "ok");
    EXPECT_STREQ(kcache_enum_name(KCACHE_ENUM_STATUS, KCACHE_STATUS_DRIVER_SUSPECT),
                 "driver_suspect");
    EXPECT_STREQ(kcache_enum_name(KCACHE_ENUM_STATUS, KCACHE_STATUS_DRIVER_SUSPECT + 1), "unknown");
    EXPECT_STREQ(kcache_enum_name(KCACHE_ENUM_STATUS, -1), "unknown");
    EXPECT_STREQ(kcache_enum_name(KCACHE_ENUM_RUNG, KCACHE_RUNG_REMOTE), "remote");
    EXPECT_STREQ(kcache_enum_name(KCACHE_ENUM_MODE, KCACHE_MODE_FAIL_FAST), "fail_fast");
    EXPECT_STREQ(kcache_enum_name(KCACHE_ENUM_MISS_CAUSE, KCACHE_MISS_NOT_STORED), "not_stored");
    EXPECT_STREQ(kcache_enum_name(KCACHE_ENUM_SOURCE, KCACHE_SOURCE_API), "api");
    EXPECT_STREQ(kcache_enum_name(static_cast<kcache_enum>(99), 0), "unknown");
}

// Learning a device ahead of its requests: ok on a real one, with no
// message left from the failure before it, again once it is known, and
// its request answers as ever.
TEST_F(CApiOutcome, ADeviceIsLearntAheadOfItsRequests) {
    ASSERT_EQ(kcache_prepare_device(cache(), nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_prepare_device(cache(), device_), KCACHE_STATUS_OK);
    EXPECT_STREQ(kcache_last_error(), "");
    EXPECT_EQ(kcache_prepare_device(cache(), device_), KCACHE_STATUS_OK);
    kcache_kernel_request r = KCACHE_KERNEL_REQUEST_INIT;
    r.kernel = "dot";
    cl_program p = nullptr;
    ASSERT_EQ(kcache_get_kernel_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_OK)
        << kcache_last_error();
    clReleaseProgram(p);
}

// A JIT, then a repeat: each outcome says what answered and why above it
// missed; the binary comes with one too.
TEST_F(CApiOutcome, KernelRequestsAnswerWithTheWholeOutcome) {
    kcache_kernel_request r = KCACHE_KERNEL_REQUEST_INIT;
    r.kernel = "dot";
    cl_program p = nullptr;
    OutcomeOwner first;
    ASSERT_EQ(kcache_get_kernel_program_v2(cache(), context_, device_, &r, &p, &first.o),
              KCACHE_STATUS_OK)
        << kcache_last_error();
    ASSERT_NE(p, nullptr);
    clReleaseProgram(p);
    EXPECT_EQ(kcache_outcome_status(first.o), KCACHE_STATUS_OK);
    EXPECT_EQ(kcache_outcome_rung(first.o), KCACHE_RUNG_JIT);
    EXPECT_EQ(std::string(kcache_outcome_key(first.o)).size(), 64u);
    EXPECT_GT(kcache_outcome_compile_us(first.o), 0u);
    EXPECT_GE(kcache_outcome_total_us(first.o), kcache_outcome_compile_us(first.o));
    ASSERT_GT(kcache_outcome_miss_count(first.o), 0u);
    kcache_rung rung = KCACHE_RUNG_NONE;
    kcache_miss_cause cause = KCACHE_MISS_OTHER;
    const char* detail = nullptr;
    ASSERT_EQ(kcache_outcome_miss(first.o, 0, &rung, &cause, &detail), KCACHE_STATUS_OK);
    EXPECT_EQ(rung, KCACHE_RUNG_IN_PROCESS);
    EXPECT_EQ(cause, KCACHE_MISS_NOT_IN_PROCESS);
    EXPECT_NE(detail, nullptr);
    EXPECT_EQ(
        kcache_outcome_miss(first.o, kcache_outcome_miss_count(first.o), &rung, nullptr, nullptr),
        KCACHE_STATUS_INVALID_ARGUMENT);

    OutcomeOwner again;
    ASSERT_EQ(kcache_get_kernel_program_v2(cache(), context_, device_, &r, &p, &again.o),
              KCACHE_STATUS_OK);
    clReleaseProgram(p);
    EXPECT_EQ(kcache_outcome_rung(again.o), KCACHE_RUNG_IN_PROCESS);
    EXPECT_STREQ(kcache_outcome_key(again.o), kcache_outcome_key(first.o));

    OutcomeOwner bin;
    unsigned char* bytes = nullptr;
    size_t size = 0;
    ASSERT_EQ(kcache_get_kernel_binary_v2(cache(), context_, device_, &r, &bytes, &size, &bin.o),
              KCACHE_STATUS_OK);
    EXPECT_GT(size, 0u);
    kcache_free(bytes);
    EXPECT_EQ(kcache_outcome_status(bin.o), KCACHE_STATUS_OK);
    EXPECT_EQ(kcache_drain(cache(), 1000), KCACHE_STATUS_OK);
}

// NULL, zero, shorter and longer requests: refused (with an outcome saying
// so) or served as kcache_get_kernel_program serves them.
TEST_F(CApiOutcome, RefusedRequestsStillAnswerWithAnOutcome) {
    cl_program p = reinterpret_cast<cl_program>(this);
    OutcomeOwner o;
    EXPECT_EQ(kcache_get_kernel_program_v2(cache(), context_, device_, nullptr, &p, &o.o),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(p, nullptr);
    ASSERT_NE(o.o, nullptr);
    EXPECT_EQ(kcache_outcome_status(o.o), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_STREQ(kcache_outcome_message(o.o), kcache_last_error());
    kcache_outcome_free(o.o);
    o.o = nullptr;

    kcache_kernel_request r = KCACHE_KERNEL_REQUEST_INIT;
    r.kernel = "dot";
    r.mode = KCACHE_MODE_FAIL_FAST;
    for (std::size_t size : {std::size_t{0}, offsetof(kcache_kernel_request, kernel)}) {
        r.struct_size = size;
        EXPECT_EQ(kcache_get_kernel_program_v2(cache(), context_, device_, &r, &p, nullptr),
                  KCACHE_STATUS_INVALID_ARGUMENT)
            << size;
    }
    struct {
        kcache_kernel_request known;
        std::uint64_t future;
    } newer{};
    newer.known = r;
    newer.known.struct_size = sizeof newer;
    EXPECT_EQ(kcache_get_kernel_program_v2(cache(), context_, device_, &newer.known, &p, &o.o),
              KCACHE_STATUS_NOT_CACHED);
    EXPECT_EQ(kcache_outcome_rung(o.o), KCACHE_RUNG_NONE);
    EXPECT_GT(kcache_outcome_miss_count(o.o), 0u);
    newer.future = 1;
    unsigned char* bytes = nullptr;
    size_t size = 7;
    EXPECT_EQ(kcache_get_kernel_binary_v2(cache(), context_, device_, &newer.known, &bytes, &size,
                                          nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(size, 0u);
    EXPECT_EQ(kcache_get_kernel_binary_v2(nullptr, context_, device_, &r, &bytes, &size, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_get_source_program_v2(cache(), context_, device_, nullptr, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
}

TEST_F(CApiOutcome, ASourceThatDoesNotBuildAnswersItsBuildLog) {
    kcache_source_request r = KCACHE_SOURCE_REQUEST_INIT;
    r.source = "__kernel void broken(__global float* x) { x[0] = undeclared; }";
    cl_program p = nullptr;
    OutcomeOwner o;
    EXPECT_EQ(kcache_get_source_program_v2(cache(), context_, device_, &r, &p, &o.o),
              KCACHE_STATUS_BUILD_ERROR);
    EXPECT_EQ(p, nullptr);
    EXPECT_NE(std::string(kcache_outcome_message(o.o)).find("undeclared"), std::string::npos)
        << kcache_outcome_message(o.o);
    r.source = kScaleSource;
    OutcomeOwner ok;
    ASSERT_EQ(kcache_get_source_program_v2(cache(), context_, device_, &r, &p, &ok.o),
              KCACHE_STATUS_OK)
        << kcache_last_error();
    clReleaseProgram(p);
    EXPECT_EQ(kcache_outcome_rung(ok.o), KCACHE_RUNG_JIT);
}

// A cache opened from a configuration object; the cache's configuration
// reads back; a store that cannot be made is an error with an outcome.
TEST_F(CApiOutcome, ACacheOpensFromAConfigurationObject) {
    kcache_config* c = nullptr;
    ASSERT_EQ(kcache_config_load(&c), KCACHE_STATUS_OK);
    ASSERT_EQ(kcache_config_set(c, "dir", (dir() / "other").c_str()), KCACHE_STATUS_OK);
    kcache_cache* opened = nullptr;
    OutcomeOwner o;
    ASSERT_EQ(kcache_open_config(c, &opened, &o.o), KCACHE_STATUS_OK) << kcache_last_error();
    EXPECT_EQ(kcache_outcome_status(o.o), KCACHE_STATUS_OK);
    kcache_config* back = nullptr;
    ASSERT_EQ(kcache_cache_config(opened, &back), KCACHE_STATUS_OK);
    char* d = nullptr;
    ASSERT_EQ(kcache_config_get(back, "dir", &d), KCACHE_STATUS_OK);
    EXPECT_EQ(std::string(d), (dir() / "other").string());
    kcache_free(d);
    kcache_config_free(back);
    kcache_close(opened);

    ASSERT_EQ(kcache_config_set(c, "dir", "/proc/version/store"), KCACHE_STATUS_OK);
    OutcomeOwner failed;
    opened = reinterpret_cast<kcache_cache*>(this);
    EXPECT_EQ(kcache_open_config(c, &opened, &failed.o), KCACHE_STATUS_STORE_ERROR);
    EXPECT_EQ(opened, nullptr);
    EXPECT_EQ(kcache_outcome_status(failed.o), KCACHE_STATUS_STORE_ERROR);
    EXPECT_STRNE(kcache_outcome_message(failed.o), "");
    kcache_config_free(c);
}

int g_released = 0;
void count_release(void* user) {
    g_released += *static_cast<int*>(user);
}
void ignore(kcache_log_level, const char*, void*) {}

TEST(CApiLogHandler, AReplacedHandlerIsReleasedOnce) {
    int one = 1, ten = 10;
    g_released = 0;
    kcache_set_log_handler_v2(ignore, &one, count_release);
    EXPECT_EQ(g_released, 0);
    kcache_set_log_handler_v2(ignore, &ten, count_release);
    EXPECT_EQ(g_released, 1);
    kcache_set_log_handler(nullptr, nullptr);
    EXPECT_EQ(g_released, 11);
    kcache_set_log_handler_v2(nullptr, &one, count_release);  // nothing to install: released now
    EXPECT_EQ(g_released, 12);
}

}  // namespace
}  // namespace kcache::test
