// A source request's own known-answer test through the C API
// (kcache_source_request's kat_path, kat_reference), on PoCL: enforce answers
// KCACHE_STATUS_DRIVER_SUSPECT with the verdict in the outcome, the C
// reference fills the expected outputs, a caller built before these fields
// existed (a smaller struct_size) is served untested, and misuse is refused.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "jit_support.hpp"
#include "kcache/kcache.h"
#include "source_kat_fixture.hpp"

namespace kcache::test {
namespace {

class SourceKatC : public SourceKatTest {
  protected:
    void SetUp() override {
        SourceKatTest::SetUp();
        source_ = example("saxpy.cl");
    }
    void TearDown() override {
        kcache_close(cache_);
        kcache_outcome_free(outcome_);
        if (program_ != nullptr) {
            clReleaseProgram(program_);
        }
        SourceKatTest::TearDown();
    }

    // Opens the cache with KCACHE_CANARY `policy` on dir()/store.
    void open(const char* policy) {
        kcache_config* c = nullptr;
        ASSERT_EQ(kcache_config_new(&c), KCACHE_STATUS_OK);
        const std::string store = (dir() / "store").string();
        ASSERT_EQ(kcache_config_set(c, "dir", store.c_str()), KCACHE_STATUS_OK);
        ASSERT_EQ(kcache_config_set(c, "jit_path", jit_helper_path()), KCACHE_STATUS_OK);
        ASSERT_EQ(kcache_config_set(c, "canary", policy), KCACHE_STATUS_OK);
        kcache_outcome* opened = nullptr;
        EXPECT_EQ(kcache_open_config(c, &cache_, &opened), KCACHE_STATUS_OK);
        kcache_outcome_free(opened);
        kcache_config_free(c);
    }

    kcache_source_request request(const std::string& kat) {
        kat_path_ = kat;
        kcache_source_request r = KCACHE_SOURCE_REQUEST_INIT;
        r.source = source_.c_str();
        r.name = "my_saxpy";
        r.kat_path = kat_path_.c_str();
        return r;
    }

    kcache_status ask(const kcache_source_request& r) {
        kcache_outcome_free(std::exchange(outcome_, nullptr));
        if (program_ != nullptr) {
            clReleaseProgram(std::exchange(program_, nullptr));
        }
        return kcache_get_source_program_v2(cache_, context_, device_, &r, &program_, &outcome_);
    }
    std::string message() const { return kcache_outcome_message(outcome_); }

    std::string source_, kat_path_;
    kcache_cache* cache_ = nullptr;
    cl_program program_ = nullptr;
    kcache_outcome* outcome_ = nullptr;
};

// my_saxpy's reference as a C callback; `user` counts its calls, and a
// negative count asks for a wrong answer.
int c_saxpy_reference(void* user, size_t n_args, const float* const* inputs,
                      const size_t* input_counts, float* const* expected,
                      const size_t* expected_counts) {
    int& calls = *static_cast<int*>(user);
    if (n_args != 4 || input_counts[0] != 1 || expected_counts[2] != input_counts[1] ||
        expected_counts[0] != 0 || expected[0] != nullptr) {
        return 1;
    }
    for (size_t i = 0; i < expected_counts[2]; ++i) {
        expected[2][i] = inputs[0][0] * inputs[1][i] + inputs[2][i] + (calls < 0 ? 1.0f : 0.0f);
    }
    calls += calls < 0 ? 0 : 1;
    return 0;
}

// Requests of this process that ended driver_suspect, by any rung (the
// counters by index; the frozen kcache_stats has no column for them).
std::uint64_t suspect_requests(kcache_cache* cache) {
    std::vector<std::uint64_t> v(kcache_stat_count());
    std::size_t n = 0;
    EXPECT_EQ(kcache_stat_values(cache, v.data(), v.size(), &n), KCACHE_STATUS_OK);
    std::uint64_t sum = 0;
    const std::string suffix = ".driver_suspect";
    for (std::size_t i = 0; i < std::min(n, v.size()); ++i) {
        const std::string name = kcache_stat_name(i);
        if (name.rfind("requests.", 0) == 0 && name.size() > suffix.size() &&
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            sum += v[i];
        }
    }
    return sum;
}

int c_failing_reference(void*, size_t, const float* const*, const size_t*, float* const*,
                        const size_t*) {
    return 7;
}

TEST_F(SourceKatC, EnforceAnswersDriverSuspectWithTheVerdict) {
    open("enforce");
    const std::uint64_t before = suspect_requests(cache_);
    EXPECT_EQ(ask(request(write_kat(wrong_kat()))), KCACHE_STATUS_DRIVER_SUSPECT);
    EXPECT_EQ(suspect_requests(cache_) - before, 1u);
    EXPECT_EQ(program_, nullptr);
    EXPECT_EQ(kcache_outcome_status(outcome_), KCACHE_STATUS_DRIVER_SUSPECT);
    EXPECT_NE(message().find("result: args[2][5]: got"), std::string::npos) << message();
    EXPECT_NE(message().find("KCACHE_CANARY=enforce"), std::string::npos) << message();
}

TEST_F(SourceKatC, TheCReferenceFillsTheExpectedOutputs) {
    open("enforce");
    int calls = 0;
    kcache_source_request r = request(write_kat(reference_kat()));
    r.kat_reference = c_saxpy_reference;
    r.kat_reference_user = &calls;
    EXPECT_EQ(ask(r), KCACHE_STATUS_OK) << message();
    EXPECT_NE(program_, nullptr);
    EXPECT_EQ(calls, 1);
    ASSERT_EQ(kept_verdicts().size(), 1u);
    EXPECT_EQ(kept_verdicts()[0].state, canary::VerdictState::validated);

    // Another test (new options: another binary) whose reference is wrong.
    int wrong = -1;
    r.options = "-cl-mad-enable";
    r.kat_reference_user = &wrong;
    EXPECT_EQ(ask(r), KCACHE_STATUS_DRIVER_SUSPECT) << message();

    r.options = "-cl-no-signed-zeros";
    r.kat_reference = c_failing_reference;
    EXPECT_EQ(ask(r), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(message().find("the KAT reference returned an error"), std::string::npos)
        << message();
    EXPECT_EQ(program_, nullptr);
}

TEST_F(SourceKatC, ACallerBuiltBeforeTheKatFieldsIsServedUntested) {
    open("enforce");
    kcache_source_request r = request((dir() / "none.kat.json").string());
    r.struct_size = offsetof(kcache_source_request, kat_path);  // what such a caller passes
    EXPECT_EQ(ask(r), KCACHE_STATUS_OK) << message();
    EXPECT_NE(program_, nullptr);
    EXPECT_FALSE(std::filesystem::exists(canary::canary_dir(dir() / "store") / "kat"));
    // The same request with the whole struct: its KAT file is missing.
    r.struct_size = sizeof r;
    EXPECT_EQ(ask(r), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(message().find("none.kat.json"), std::string::npos) << message();
}

TEST_F(SourceKatC, AReferenceWithoutAKatFileOrAnEmptyPathIsRefused) {
    open("warn");
    int calls = 0;
    kcache_source_request r = request("");
    r.kat_path = nullptr;
    r.kat_reference = c_saxpy_reference;
    r.kat_reference_user = &calls;
    EXPECT_EQ(ask(r), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(message().find("kat_reference needs request->kat_path"), std::string::npos)
        << message();
    r = request("");
    EXPECT_EQ(ask(r), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_NE(message().find("kat_path is empty"), std::string::npos) << message();
    EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace kcache::test
