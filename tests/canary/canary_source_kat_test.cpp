// A SourceRequest's own known-answer test at run time, through the service's
// C++ API on PoCL under the test layer: the test runs on the binary about to
// be served, once per driver (its verdict kept for later processes), and the
// canary policy decides what a failing one gets; a test that hangs is a
// verdict, a bad KAT file a clear error.

#include <chrono>

#include "kcache/compiler/subprocess.hpp"

#include "source_kat_fixture.hpp"

namespace kcache::test {
namespace {

using SourceKat = SourceKatTest;

TEST_F(SourceKat, ACorrectKernelPassesItsTestAndTheVerdictServesTheNextProcess) {
    const auto kat = write_kat(example("saxpy.kat.json"));
    auto cache = Cache::open(config(CanaryPolicy::enforce));
    ASSERT_TRUE(cache);
    Program p = cache->program(context_, device_, saxpy(kat));
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    auto kept = kept_verdicts();
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_EQ(kept[0].state, canary::VerdictState::validated) << kept[0].detail;
    EXPECT_EQ(kept[0].variant, "my_saxpy");

    // Another verdict in the file: this process keeps its own and reads no file...
    std::filesystem::path record;
    for (const auto& e : std::filesystem::recursive_directory_iterator(
             canary::canary_dir(dir() / "store") / "kat")) {
        record = e.is_regular_file() ? e.path() : record;
    }
    auto forged = *canary::record_from_json(*read_regular_file(record, 1u << 20));
    forged.verdicts[0].state = canary::VerdictState::suspect;
    forged.verdicts[0].check = "result";
    forged.verdicts[0].detail = "forged in the store";
    ASSERT_TRUE(canary::save_record(record.parent_path(), forged));
    EXPECT_EQ(cache->program(context_, device_, saxpy(kat)).outcome().status, StatusCode::ok);

    // ...and a process that has none reads the stored verdict instead of testing again.
    std::filesystem::copy(dir() / "store", dir() / "later",
                          std::filesystem::copy_options::recursive);
    auto next = Cache::open(config(CanaryPolicy::enforce, "later"));
    ASSERT_TRUE(next);
    const Outcome o = next->program(context_, device_, saxpy(kat)).outcome();
    EXPECT_EQ(o.status, StatusCode::driver_suspect);
    EXPECT_NE(o.message.find("forged in the store"), std::string::npos) << o.message;
}

TEST_F(SourceKat, AWrongAnswerIsDriverSuspectUnderEnforce) {
    auto cache = Cache::open(config(CanaryPolicy::enforce));
    ASSERT_TRUE(cache);
    Program p = cache->program(context_, device_, saxpy(write_kat(wrong_kat())));
    EXPECT_EQ(p.outcome().status, StatusCode::driver_suspect);
    EXPECT_EQ(p.get(), nullptr);
    EXPECT_NE(p.outcome().message.find("my_saxpy"), std::string::npos) << p.outcome().message;
    EXPECT_NE(p.outcome().message.find("result: args[2][5]: got"), std::string::npos)
        << p.outcome().message;
    auto kept = kept_verdicts();
    ASSERT_EQ(kept.size(), 1u);
    EXPECT_EQ(kept[0].state, canary::VerdictState::suspect);
    // The program is kept in the process, never handed out.
    EXPECT_EQ(cache->program(context_, device_, saxpy(dir() / "saxpy.kat.json")).outcome().status,
              StatusCode::driver_suspect);

    // The CLI shows the verdict with the driver canary's.
    compiler::SpawnSpec spec;
    spec.program = KCACHE_CLI_PATH;
    spec.env_overrides = {"KCACHE_DIR=" + (dir() / "store").string()};
    for (const auto& args :
         {std::vector<std::string>{"canary", "--show"}, std::vector<std::string>{"stats"}}) {
        spec.args = args;
        const auto r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(60));
        EXPECT_EQ(r.exit_code, 0) << r.err;
        EXPECT_NE(r.out.find("my_saxpy"), std::string::npos) << args[0] << ":\n" << r.out;
        EXPECT_NE(r.out.find("suspect"), std::string::npos) << args[0] << ":\n" << r.out;
    }
}

TEST_F(SourceKat, UnderWarnAWrongAnswerIsServedWithOneLoggedWarning) {
    LogLines log;
    auto cache = Cache::open(config(CanaryPolicy::warn));
    ASSERT_TRUE(cache);
    const auto kat = write_kat(wrong_kat());
    for (int i = 0; i < 2; ++i) {
        Program p = cache->program(context_, device_, saxpy(kat));
        EXPECT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
        EXPECT_NE(p.get(), nullptr);
    }
    const std::string text = log.text();
    const std::string warning = "found the driver suspect: result: args[2][5]";
    ASSERT_NE(text.find(warning), std::string::npos) << text;
    EXPECT_EQ(text.find(warning, text.find(warning) + 1), std::string::npos) << text;
    EXPECT_NE(text.find("served anyway (KCACHE_CANARY=warn)"), std::string::npos) << text;
}

TEST_F(SourceKat, UnderOffNoTestRuns) {
    auto cache = Cache::open(config(CanaryPolicy::off));
    ASSERT_TRUE(cache);
    EXPECT_EQ(cache->program(context_, device_, saxpy(write_kat(wrong_kat()))).outcome().status,
              StatusCode::ok);
    EXPECT_FALSE(std::filesystem::exists(canary::canary_dir(dir() / "store") / "kat"));
}

TEST_F(SourceKat, ADriverThatMiscompilesTheCallersKernelIsCaught) {
    ScopedEnv faults({"KCACHE_FAULT_MATCH=my_saxpy", "KCACHE_FAULT_SOURCE_FROM=a * x[i]",
                      "KCACHE_FAULT_SOURCE_TO=a + x[i]"});
    auto cache = Cache::open(config(CanaryPolicy::enforce));
    ASSERT_TRUE(cache);
    const Outcome o =
        cache->program(context_, device_, saxpy(write_kat(example("saxpy.kat.json")))).outcome();
    EXPECT_EQ(o.status, StatusCode::driver_suspect) << o.message;
    EXPECT_NE(o.message.find("args[2][0]: got -6.75, expected -10.875"), std::string::npos)
        << o.message;
}

TEST_F(SourceKat, ATestThatHangsIsATimeoutVerdictNotAHang) {
    Config c = config(CanaryPolicy::enforce);
    c.jit_timeout = std::chrono::milliseconds(4000);  // the compile's bound and the test's
    auto cache = Cache::open(c);
    ASSERT_TRUE(cache);
    SourceRequest r;
    r.name = "spin";
    // An atomic exchange each round, a side effect no compiler may drop (a loop
    // of plain reads may be assumed to end). rusticl's llvmpipe still returns
    // from it, so scripts/test.sh leaves this test out of its rusticl run.
    r.source = "__kernel void spin(__global int* flag) { while (atomic_xchg(flag, 0) == 0) {} }";
    r.kat = write_kat(R"({"format": 1, "kernel": "spin", "global": [1],
        "args": [{"buffer": "i32", "count": 1, "in": [0], "expected": [0]}]})",
                      "spin.kat.json");
    const auto start = std::chrono::steady_clock::now();
    const Outcome o = cache->program(context_, device_, r).outcome();
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
    EXPECT_EQ(o.status, StatusCode::driver_suspect) << o.message;
    EXPECT_NE(o.message.find("suspect: timeout"), std::string::npos) << o.message;
}

TEST_F(SourceKat, ABadKatFileIsAClearErrorAndNothingIsServed) {
    auto cache = Cache::open(config(CanaryPolicy::warn));
    ASSERT_TRUE(cache);
    Program missing = cache->program(context_, device_, saxpy(dir() / "none.kat.json"));
    EXPECT_EQ(missing.outcome().status, StatusCode::invalid_argument);
    EXPECT_EQ(missing.get(), nullptr);
    EXPECT_NE(missing.outcome().message.find("none.kat.json"), std::string::npos)
        << missing.outcome().message;

    nlohmann::json kat = nlohmann::json::parse(example("saxpy.kat.json"));
    kat["args"][1]["colour"] = "red";
    Program bad = cache->program(context_, device_, saxpy(write_kat(kat.dump(), "bad.kat.json")));
    EXPECT_EQ(bad.outcome().status, StatusCode::invalid_argument);
    EXPECT_EQ(bad.get(), nullptr);
    EXPECT_NE(bad.outcome().message.find("kat.args[1]: unknown key 'colour'"), std::string::npos)
        << bad.outcome().message;
    EXPECT_TRUE(kept_verdicts().empty());
}

TEST_F(SourceKat, AReferenceComputesTheExpectedOutputsInTheCallersProcess) {
    auto cache = Cache::open(config(CanaryPolicy::enforce));
    ASSERT_TRUE(cache);
    const auto kat = write_kat(reference_kat());
    int calls = 0;
    SourceRequest right = saxpy(kat);
    right.kat_reference = [&](const auto& in, auto& expected) {
        ++calls;
        saxpy_reference(in, expected);
        return true;
    };
    EXPECT_EQ(cache->program(context_, device_, right).outcome().status, StatusCode::ok);
    EXPECT_EQ(cache->program(context_, device_, right).outcome().status, StatusCode::ok);
    EXPECT_EQ(calls, 1);  // once per driver, not per request

    auto fresh = Cache::open(config(CanaryPolicy::enforce, "other"));
    ASSERT_TRUE(fresh);
    SourceRequest wrong = saxpy(kat);
    wrong.kat_reference = [](const auto& in, auto& expected) {
        saxpy_reference(in, expected);
        expected[2][3] += 0.5f;
        return true;
    };
    const Outcome o = fresh->program(context_, device_, wrong).outcome();
    EXPECT_EQ(o.status, StatusCode::driver_suspect) << o.message;
    EXPECT_NE(o.message.find("args[2][3]"), std::string::npos) << o.message;

    auto third = Cache::open(config(CanaryPolicy::enforce, "third"));
    ASSERT_TRUE(third);
    SourceRequest failing = saxpy(kat);
    failing.kat_reference = [](const auto&, auto&) { return false; };
    const Outcome f = third->program(context_, device_, failing).outcome();
    EXPECT_EQ(f.status, StatusCode::invalid_argument) << f.message;
    EXPECT_NE(f.message.find("the KAT reference returned an error"), std::string::npos)
        << f.message;
}

}  // namespace
}  // namespace kcache::test
