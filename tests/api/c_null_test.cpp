// Every C entry point, through the shared library, with NULL arguments and
// with a zero struct_size: a status and a message, never a crash, and the
// outputs cleared.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "c_fixture.hpp"

namespace kcache::test {
namespace {

// The 0.2 names are aliases of the KCACHE_STATUS_ ones.
static_assert(KCACHE_OK == KCACHE_STATUS_OK && KCACHE_TIMEOUT == KCACHE_STATUS_TIMEOUT &&
              KCACHE_INTERNAL_ERROR == KCACHE_STATUS_INTERNAL_ERROR);

using CApiNull = CApiTest;

cl_program junk_program() {
    return reinterpret_cast<cl_program>(0x1);
}

bool said(const char* text) {
    return std::string(kcache_last_error()).find(text) != std::string::npos;
}

// Expects `get` (kcache_get_kernel_program or kcache_get_source_program) to
// refuse a NULL cache, a NULL program pointer and a NULL request `r`
// otherwise valid, and to clear the program pointer.
template <class Request>
void expect_nulls_refused(kcache_status (*get)(kcache_cache*, cl_context, cl_device_id,
                                               const Request*, cl_program*, kcache_info*),
                          kcache_cache* cache, cl_context context, cl_device_id device,
                          const Request& r) {
    cl_program p = junk_program();
    EXPECT_EQ(get(nullptr, context, device, &r, &p, nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(get(cache, context, device, &r, nullptr, nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(get(cache, context, device, nullptr, &p, nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(p, nullptr);
}

TEST_F(CApiNull, KernelProgramRefusesEachNull) {
    kcache_kernel_request r = KCACHE_KERNEL_REQUEST_INIT;
    r.kernel = "dot";
    expect_nulls_refused(kcache_get_kernel_program, cache(), context_, device_, r);
    EXPECT_TRUE(said("request is NULL")) << kcache_last_error();
    cl_program p = junk_program();
    r.kernel = nullptr;
    EXPECT_EQ(kcache_get_kernel_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(said("request->kernel")) << kcache_last_error();
    r.kernel = "dot";
    r.mode = KCACHE_MODE_FAIL_FAST;
    EXPECT_EQ(kcache_get_kernel_program(cache(), nullptr, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_get_kernel_program(cache(), context_, nullptr, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
}

TEST_F(CApiNull, SourceProgramRefusesEachNull) {
    kcache_source_request r = KCACHE_SOURCE_REQUEST_INIT;
    r.source = kScaleSource;
    expect_nulls_refused(kcache_get_source_program, cache(), context_, device_, r);
    cl_program p = junk_program();
    r.source = nullptr;
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    r.source = kScaleSource;
    r.n_entry_points = 1;  // entry_points NULL
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    const char* names[] = {nullptr};
    r.entry_points = names;
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(said("NULL name")) << kcache_last_error();
}

// A program from IL: bytes that are not a SPIR-V module, a module cut
// mid-word, or one with link units are refused, naming the field.
TEST_F(CApiNull, SourceProgramRefusesIlThatIsNotAModule) {
    const std::uint32_t header[5] = {0x07230203u, 0x00010200u, 0, 1, 0};  // magic, 1.2
    const char text[] = "kernel void k(global int* a) { a[0] = 1; }";
    kcache_source_request r = KCACHE_SOURCE_REQUEST_INIT;
    cl_program p = junk_program();
    r.il = text;  // OpenCL C, not SPIR-V
    r.il_size = sizeof text - 1;
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(said("request->il is not a SPIR-V module")) << kcache_last_error();
    r.il = header;
    r.il_size = sizeof header - 2;  // not whole words
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(said("request->il is not a SPIR-V module")) << kcache_last_error();
    const char* sources[] = {kScaleSource};
    r.il_size = sizeof header;
    r.n_link_units = 1;
    r.link_sources = sources;
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(said("comes with link units")) << kcache_last_error();
    r.n_link_units = 0;
    r.il = nullptr;  // a size without a module
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(p, nullptr);
}

// A link's units: each needs a source, each header a name and a source, and
// a library is not a program kcache keeps.
TEST_F(CApiNull, SourceProgramRefusesABadLink) {
    kcache_source_request r = KCACHE_SOURCE_REQUEST_INIT;
    r.source = kScaleSource;
    r.n_link_units = 1;  // link_sources NULL
    cl_program p = junk_program();
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(said("link_sources must not be NULL")) << kcache_last_error();
    const char* empty[] = {""};
    r.link_sources = empty;
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(said("link_sources[0] is NULL or empty")) << kcache_last_error();
    const char* sources[] = {kScaleSource};
    const size_t counts[] = {1};
    const char* names[] = {nullptr};
    r.link_sources = sources;
    r.link_header_counts = counts;
    r.link_header_names = names;
    r.link_header_sources = sources;
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(said("link_header_names[0] is NULL or empty")) << kcache_last_error();
    r.link_header_counts = nullptr;
    r.options = "-create-library";
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &r, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(said("-create-library")) << kcache_last_error();
    EXPECT_EQ(p, nullptr);
}

TEST_F(CApiNull, KernelBinaryRefusesEachNullAndClearsItsOutputs) {
    kcache_kernel_request r = KCACHE_KERNEL_REQUEST_INIT;
    r.kernel = "dot";
    unsigned char* bytes = reinterpret_cast<unsigned char*>(0x1);
    size_t size = 99;
    EXPECT_EQ(kcache_get_kernel_binary(nullptr, context_, device_, &r, &bytes, &size, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(size, 0u);
    EXPECT_EQ(kcache_get_kernel_binary(cache(), context_, device_, &r, nullptr, &size, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_get_kernel_binary(cache(), context_, device_, &r, &bytes, nullptr, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(bytes, nullptr);
    EXPECT_EQ(kcache_get_kernel_binary(cache(), context_, device_, nullptr, &bytes, &size, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    kcache_free(nullptr);
}

// The entry points of 0.2 and the rest of the API.
TEST_F(CApiNull, OldEntryPointsAndTheRestRefuseNull) {
    cl_program p = junk_program();
    EXPECT_EQ(kcache_get_program(cache(), context_, device_, nullptr, nullptr, 0,
                                 KCACHE_MODE_BLOCKING, &p, nullptr),
              KCACHE_INVALID_ARGUMENT);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(kcache_get_program_source(cache(), context_, device_, nullptr, nullptr, nullptr, 0, 0,
                                        KCACHE_MODE_BLOCKING, &p, nullptr),
              KCACHE_INVALID_ARGUMENT);
    unsigned char* bytes = nullptr;
    size_t size = 0;
    EXPECT_EQ(kcache_get_binary(cache(), context_, device_, "dot", nullptr, 0,
                                KCACHE_MODE_FAIL_FAST, &bytes, nullptr),
              KCACHE_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_get_binary(nullptr, context_, device_, "dot", nullptr, 0,
                                KCACHE_MODE_FAIL_FAST, &bytes, &size),
              KCACHE_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_open(nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_get_stats(nullptr, nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_get_stats(cache(), nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    size_t dropped = 5;
    EXPECT_EQ(kcache_forget_context(nullptr, context_, &dropped), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(dropped, 0u);
    EXPECT_EQ(kcache_forget_context(cache(), nullptr, nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_prepare_device(nullptr, device_), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_prepare_device(cache(), nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(std::strstr(kcache_last_error(), "kcache_prepare_device"), nullptr);
    EXPECT_STREQ(kcache_status_name(static_cast<kcache_status>(-1)), "KCACHE_UNKNOWN");
    EXPECT_STREQ(kcache_status_name(KCACHE_STATUS_TIMEOUT), "KCACHE_TIMEOUT");
    kcache_set_log_handler(nullptr, nullptr);
    kcache_close(nullptr);
    EXPECT_STRNE(kcache_version(), "");
}

// A zero struct_size (a struct the caller did not initialize with its _INIT
// macro) is refused for every struct.
TEST_F(CApiNull, ZeroStructSizeIsInvalidForEveryStruct) {
    cl_program p = junk_program();
    kcache_kernel_request kr = KCACHE_KERNEL_REQUEST_INIT;
    kr.kernel = "dot";
    kr.mode = KCACHE_MODE_FAIL_FAST;
    kr.struct_size = 0;
    EXPECT_EQ(kcache_get_kernel_program(cache(), context_, device_, &kr, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(said("struct_size is 0")) << kcache_last_error();
    unsigned char* bytes = nullptr;
    size_t size = 0;
    EXPECT_EQ(kcache_get_kernel_binary(cache(), context_, device_, &kr, &bytes, &size, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    kcache_source_request sr = KCACHE_SOURCE_REQUEST_INIT;
    sr.source = kScaleSource;
    sr.struct_size = 0;
    EXPECT_EQ(kcache_get_source_program(cache(), context_, device_, &sr, &p, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    kr.struct_size = sizeof kr;
    kcache_info info = KCACHE_INFO_INIT;
    info.struct_size = 0;
    EXPECT_EQ(kcache_get_kernel_program(cache(), context_, device_, &kr, &p, &info),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_TRUE(said("info->struct_size")) << kcache_last_error();
    EXPECT_EQ(kcache_get_kernel_binary(cache(), context_, device_, &kr, &bytes, &size, &info),
              KCACHE_STATUS_INVALID_ARGUMENT);
    kcache_stats stats = KCACHE_STATS_INIT;
    stats.struct_size = 0;
    EXPECT_EQ(kcache_get_stats(cache(), &stats), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(bytes, nullptr);
}

}  // namespace
}  // namespace kcache::test
