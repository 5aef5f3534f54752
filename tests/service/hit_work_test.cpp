// The hit path's budget of work (docs/design.md, "The hit path's budget"):
// a first hit in a fresh process, and repeat hits in the same or a new
// context, each held to a count of files opened, bytes read, JSON documents
// parsed, random draws and OpenCL calls, so that a change adding a read, a
// parse or a query to a hit fails here. Each count comes from a child
// process (hit_work_child) on a store seeded by an earlier child, with the
// driver canary's record in place as after `kcache warm`.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "jit_support.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/device_db/identity.hpp"
#include "temp_dir.hpp"
#include "test_platform.hpp"

namespace kcache::test {
namespace {

using nlohmann::json;

class HitWork : public TempDirTest {
  protected:
    static void SetUpTestSuite() { use_private_pocl_cache(); }

    // A store with `dot` in it (a JIT by a first child, then one hit, so
    // that the hot copy is made) and the canary's verdicts recorded.
    void SetUp() override {
        TempDirTest::SetUp();
        ::setenv("KCACHE_DIR", (dir() / "store").c_str(), 1);
        ::setenv("XDG_CONFIG_HOME", (dir() / "xdg").c_str(), 1);
        ::setenv("KCACHE_JIT_PATH", jit_helper_path(), 1);
        ::setenv("OPENCL_LAYERS", KCACHE_COUNT_LAYER, 1);
        ::setenv("KCACHE_CANARY", "off", 1);
        ASSERT_EQ(run("same")["rungs"][0], "jit");
        record_verdicts();
        ::setenv("KCACHE_CANARY", "warn", 1);  // the default: the record is read
        ASSERT_EQ(run("same")["rungs"][0], "user_store");
    }

    void TearDown() override {
        for (const char* v : {"KCACHE_DIR", "XDG_CONFIG_HOME", "KCACHE_JIT_PATH", "OPENCL_LAYERS",
                              "KCACHE_CANARY"}) {
            ::unsetenv(v);
        }
        TempDirTest::TearDown();
    }

    // The canary's record for the test device, as `kcache warm` leaves it.
    void record_verdicts() {
        auto identity = device_db::probe(find_test_device());
        ASSERT_TRUE(identity.ok()) << identity.error().message;
        canary::Record record;
        record.identity = canary::driver_identity(identity.value());
        auto saved = canary::save_record(canary::canary_dir(dir() / "store"), record);
        ASSERT_TRUE(saved.ok()) << saved.error();
    }

    // What hit_work_child `hits` printed (empty on a failure, reported).
    static json run(const std::string& hits) {
        const std::string cmd = std::string(KCACHE_HIT_WORK_CHILD) + " " + hits;
        FILE* out = ::popen(cmd.c_str(), "r");
        std::string text;
        char buf[4096];
        for (std::size_t n; out != nullptr && (n = std::fread(buf, 1, sizeof buf, out)) > 0;) {
            text.append(buf, n);
        }
        const int status = out != nullptr ? ::pclose(out) : -1;
        EXPECT_EQ(status, 0) << cmd << ": " << text;
        json j = json::parse(text, nullptr, false);
        EXPECT_TRUE(j.is_object()) << cmd << " printed " << text;
        return j.is_object() ? j : json::object();
    }

    // run(`hits`) twice, each count the smaller of the two: a retry that
    // another thread's work may cause now and then (the once-per-platform
    // probe's, when the context's reference count moved meanwhile) is not
    // taken for a regression, which shows in both.
    static json least(const std::string& hits) {
        json out = run(hits);
        const json again = run(hits);
        for (auto& [name, value] : out.items()) {
            if (value.is_number_unsigned() && again.contains(name)) {
                value = std::min(value.get<std::uint64_t>(), again[name].get<std::uint64_t>());
            }
        }
        return out;
    }
};

using Budget = std::map<std::string, std::uint64_t>;

// Expects each count of `got` at most its `budget` (`what` names the hits).
void expect_within(const json& got, const Budget& budget, const std::string& what) {
    for (const auto& [name, most] : budget) {
        ASSERT_TRUE(got.contains(name)) << what << ": no count " << name << " in " << got.dump();
        EXPECT_LE(got[name].get<std::uint64_t>(), most)
            << what << ": " << name << " over its budget (docs/design.md, \"The hit path's "
            << "budget\"): " << got.dump();
    }
}

// `more` less `base`, count by count, per hit of the `hits` that `more`
// adds (rounded up, so that one hit's extra work shows).
json minus(const json& more, const json& base, std::uint64_t hits) {
    json out = json::object();
    for (const auto& [name, value] : more.items()) {
        if (value.is_number_unsigned() && name != "binary_bytes") {
            const std::uint64_t extra =
                value.get<std::uint64_t>() - base[name].get<std::uint64_t>();
            out[name] = (extra + hits - 1) / hits;
        }
    }
    return out;
}

TEST_F(HitWork, AFirstHitInAFreshProcessStaysWithinItsBudget) {
    const json first = least("same");
    ASSERT_EQ(first["rungs"], json::array({"user_store"})) << first.dump();
    const std::uint64_t binary = first["binary_bytes"].get<std::uint64_t>();
    ASSERT_GT(binary, 0u);
    expect_within(first,
                  {{"files_opened", 5},
                   {"bytes_read", binary + 2048},
                   {"json_parsed", 1},
                   {"random_draws", 0},
                   {"cl_queries", 21},
                   {"cl_programs_made", 2},
                   {"cl_builds", 1}},
                  "a first hit");
}

// Cache::prepare learns the device before the first request: that request
// then makes none of the identity's driver queries, only the context's (its
// devices, and its reference count for the once-per-platform probe).
TEST_F(HitWork, AFirstHitOfAPreparedDeviceMakesOnlyItsContextsQueries) {
    const json first = least("same");
    const json prepared = least("prepared same");
    ASSERT_EQ(prepared["rungs"], json::array({"user_store"})) << prepared.dump();
    expect_within(prepared, {{"cl_queries", 4}, {"cl_programs_made", 2}, {"cl_builds", 1}},
                  "a first hit of a prepared device");
    EXPECT_GE(first["cl_queries"].get<std::uint64_t>(),
              prepared["cl_queries"].get<std::uint64_t>() + 15)
        << "unprepared " << first.dump() << "\nprepared " << prepared.dump();
}

TEST_F(HitWork, ARepeatHitInTheSameContextDoesNoWork) {
    const json one = least("same");
    const json three = least("same same same");
    ASSERT_EQ(three["rungs"], json::array({"user_store", "in_process", "in_process"}))
        << three.dump();
    expect_within(minus(three, one, 2),
                  {{"files_opened", 0},
                   {"bytes_read", 0},
                   {"json_parsed", 0},
                   {"random_draws", 0},
                   {"cl_queries", 0},
                   {"cl_programs_made", 0},
                   {"cl_builds", 0}},
                  "a repeat hit, same context");
}

TEST_F(HitWork, ARepeatHitInANewContextOnlyLoads) {
    const json one = least("same");
    const json three = least("same new new");
    ASSERT_EQ(three["rungs"][0], "user_store") << three.dump();
    expect_within(minus(three, one, 2),
                  {{"files_opened", 0},
                   {"bytes_read", 0},
                   {"json_parsed", 0},
                   {"random_draws", 0},
                   {"cl_queries", 3},
                   {"cl_programs_made", 1},
                   {"cl_builds", 1}},
                  "a repeat hit, new context");
}

}  // namespace
}  // namespace kcache::test
