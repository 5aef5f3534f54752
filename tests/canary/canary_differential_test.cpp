// The differential check, on PoCL under the test layer: a driver update is
// simulated by a reported driver version; `kcache warm` under the earlier
// version leaves its binaries in the store, and the canary of the later one
// loads them on it, runs them on the same inputs and lets the CPU reference
// decide which driver is wrong.

#include <gtest/gtest.h>

#include <fstream>

#include "canary_support.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/service/parts.hpp"
#include "kcache/store/store.hpp"
#include "temp_dir.hpp"

namespace kcache::canary {
namespace {

constexpr const char* kDot = "dot:dtype=f32,arith=f32,ls=256";
constexpr const char* kConv = "conv2d:dtype=f32,act=none,ls=64";

// dot's partial sums subtract instead of add.
const std::vector<std::string> kDotMiscompiled = {"KCACHE_FAULT_MATCH=dot_partial",
                                                  "KCACHE_FAULT_SOURCE_FROM=acc += KC_PRODUCT",
                                                  "KCACHE_FAULT_SOURCE_TO=acc -= KC_PRODUCT"};

// The differential of `v`, once checked that the canary's verdict is
// `state` and that driver `driver`'s binary was compared.
Differential checked(const Verdict& v, VerdictState state, const std::string& driver) {
    EXPECT_EQ(v.state, state) << v.variant << ": " << v.detail;
    EXPECT_TRUE(v.differential) << v.variant;
    Differential d = v.differential.value_or(Differential{});
    EXPECT_EQ(d.previous_driver, driver) << v.variant;
    return d;
}

class CanaryDifferential : public test::FaultLayerTest {
  protected:
    void SetUp() override {
        test::FaultLayerTest::SetUp();
        device_ = test::test_device();
    }

    std::filesystem::path store_dir() const { return dir() / "store"; }

    // `kcache warm` of dot and conv2d under driver `driver` and the faults of
    // `faults`: their binaries, built by that driver, land in the store.
    void warm(const std::string& driver, std::vector<std::string> faults = {}) {
        const auto manifest = dir() / "manifest.json";
        std::ofstream(manifest) << R"({"registry": [{"kernel": "dot"}, {"kernel": "conv2d"}]})";
        compiler::SpawnSpec spec;
        spec.program = KCACHE_CLI_PATH;
        spec.args = {"warm", "--manifest", manifest.string()};
        spec.env_overrides = std::move(faults);
        spec.env_overrides.push_back("KCACHE_FAULT_DRIVER=" + driver);
        spec.env_overrides.push_back("KCACHE_DIR=" + store_dir().string());
        spec.env_overrides.push_back("KCACHE_CANARY=off");
        const auto r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(240));
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    }

    // The canary of dot and conv2d under driver `driver` and `faults`, with
    // the differential check against the store's earlier binaries.
    Record canary(const std::string& driver, std::vector<std::string> faults = {}) {
        faults.push_back("KCACHE_FAULT_DRIVER=" + driver);
        test::ScopedEnv scoped(faults);
        device_db::DeviceIdentity d = device_;
        d.driver_version = driver;
        const std::vector<kernels::Variant> set = {*kernels::parse_variant(kDot),
                                                   *kernels::parse_variant(kConv)};
        Config config;
        config.dir = store_dir();
        auto store = service::open_user_store(config, service::StoreAccess::read_only,
                                              service::OpenTiming::at_once);
        EXPECT_TRUE(store) << store.error().message;
        const PreviousBinaries previous =
            store ? previous_binaries(*store, d, set, canary_dir(store_dir())) : PreviousBinaries{};
        // One helper: both variants' earlier binaries travel in one stdin.
        RunOptions o{test::verify_helper(), 99, std::chrono::seconds(120), 1};
        return run_canary(d, set, o, previous);
    }

    device_db::DeviceIdentity device_;
};

TEST_F(CanaryDifferential, TheReferenceBlamesTheNewDriverWhenTheEarlierBinaryIsRight) {
    warm("8.0-good");
    const Record r = canary("8.1-broken", kDotMiscompiled);
    ASSERT_EQ(r.verdicts.size(), 2u);
    const Differential dot = checked(r.verdicts[0], VerdictState::suspect, "8.0-good");
    EXPECT_EQ(dot.result, "new_wrong") << dot.detail;
    EXPECT_GT(dot.max_difference.value_or(0), 1.0);
    const Differential conv = checked(r.verdicts[1], VerdictState::validated, "8.0-good");
    EXPECT_EQ(conv.result, "agree") << conv.detail;
}

TEST_F(CanaryDifferential, TheReferenceBlamesTheEarlierBinaryWhenItIsWrong) {
    warm("8.0-broken", kDotMiscompiled);
    const Record r = canary("8.1-good");
    ASSERT_EQ(r.verdicts.size(), 2u);
    const Differential dot = checked(r.verdicts[0], VerdictState::validated, "8.0-broken");
    EXPECT_EQ(dot.result, "previous_wrong") << dot.detail;
    EXPECT_EQ(checked(r.verdicts[1], VerdictState::validated, "8.0-broken").result, "agree");
}

TEST_F(CanaryDifferential, AnEarlierBinaryTheNewDriverCannotRunNeverBlamesTheNewDriver) {
    warm("8.0-corrupt");
    {  // dot's stored binary damaged under a valid checksum
        Config config;
        config.dir = store_dir();
        auto store = service::open_user_store(config, service::StoreAccess::read_write,
                                              service::OpenTiming::at_once);
        ASSERT_TRUE(store) << store.error().message;
        auto entries = store->list();
        ASSERT_TRUE(entries);
        int damaged = 0;
        for (const store::EntryInfo& e : *entries) {
            if (e.fields.kernel_name != kDot) {
                continue;
            }
            auto entry = store->get(e.key);
            ASSERT_TRUE(entry);
            store::Bytes bytes = entry->bytes;
            for (std::size_t i = bytes.size() / 2; i < bytes.size() / 2 + bytes.size() / 4; ++i) {
                bytes[i] = static_cast<std::uint8_t>(~bytes[i]);
            }
            ASSERT_TRUE(store->put(e.fields, bytes, e.provenance, store::PutMode::replace));
            ++damaged;
        }
        ASSERT_EQ(damaged, 1);
    }
    const Record r = canary("8.1-good");
    const Differential dot = checked(r.verdicts.at(0), VerdictState::validated, "8.0-corrupt");
    EXPECT_NE(dot.result, "agree") << dot.detail;
    EXPECT_NE(dot.result, "new_wrong") << dot.detail;
    std::cout << "damaged earlier binary: " << dot.result << ": " << dot.detail << "\n";
}

TEST_F(CanaryDifferential, OnlyAnotherDriversBinaryIsAnEarlierOne) {
    warm("8.0-same");
    const Record r = canary("8.0-same");
    for (const Verdict& v : r.verdicts) {
        EXPECT_EQ(v.state, VerdictState::validated) << v.variant << ": " << v.detail;
        EXPECT_FALSE(v.differential) << v.variant;
    }
}

TEST_F(CanaryDifferential, TheCliRecordsTheDifferential) {
    warm("8.0-cli");
    compiler::SpawnSpec spec;
    spec.program = KCACHE_CLI_PATH;
    spec.args = {"canary", "--seed", "5"};
    spec.env_overrides = kDotMiscompiled;
    spec.env_overrides.push_back("KCACHE_FAULT_DRIVER=8.1-cli");
    spec.env_overrides.push_back("KCACHE_DIR=" + store_dir().string());
    const auto r = compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(240));
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("differential against driver 8.0-cli: new_wrong"), std::string::npos)
        << r.out;
    const auto records = load_records(canary_dir(store_dir()));
    ASSERT_EQ(records.size(), 1u);
    bool recorded = false;
    for (const Verdict& v : records[0].verdicts) {
        recorded = recorded ||
                   (v.variant == kDot && v.differential && v.differential->result == "new_wrong");
    }
    EXPECT_TRUE(recorded) << to_json(records[0]);
}

}  // namespace
}  // namespace kcache::canary
