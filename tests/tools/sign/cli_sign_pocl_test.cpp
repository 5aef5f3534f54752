// doctor and devices under the signature policy (they probe OpenCL: PoCL).

#include <gtest/gtest.h>

#include "cli_runner.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

class CliSignDevice : public CliTest {
  protected:
    std::filesystem::path make_pack() {
        auto store = ks::Store::open(dir() / "src", ks::Policy{});
        EXPECT_TRUE(store.ok());
        EXPECT_TRUE(store->put(sample_fields(0), binary_like(3000, 0), test_provenance()).ok());
        EXPECT_TRUE(store->export_pack(dir() / "p.kcpack").ok());
        return dir() / "p.kcpack";
    }
    CliRun run(const std::vector<std::string>& args, bool require) {
        return kcache(args, {"XDG_CONFIG_HOME=" + (dir() / "config").string(),
                             "KCACHE_PACKS=" + (dir() / "p.kcpack").string(),
                             std::string("KCACHE_REQUIRE_SIGNED_PACKS=") + (require ? "1" : "0")});
    }
    // The doctor's finding about pack `pack`.
    nlohmann::json finding(const CliRun& r, const std::string& pack) {
        for (const auto& f : r.json()) {
            if (f["section"] == "packs" && f["name"] == pack) {
                return f;
            }
        }
        ADD_FAILURE() << "no finding for " << pack << " in " << r.out;
        return {};
    }
};

TEST_F(CliSignDevice, DoctorAndDevicesNameAPackThePolicyKeepsOut) {
    const auto pack = make_pack();
    const CliRun relaxed = run({"doctor", "--json"}, false);
    EXPECT_EQ(relaxed.code, 0) << relaxed.out;
    auto f = finding(relaxed, pack.string());
    EXPECT_EQ(f["level"], "ok");
    EXPECT_EQ(f["value"].get<std::string>().rfind("unsigned", 0), 0u) << f;

    const CliRun strict = run({"doctor", "--json"}, true);
    EXPECT_EQ(strict.code, 1);
    f = finding(strict, pack.string());
    EXPECT_EQ(f["level"], "problem");
    EXPECT_NE(f["value"].get<std::string>().find("not used: unsigned"), std::string::npos) << f;

    const CliRun devices = run({"devices", "--json"}, true);
    ASSERT_EQ(devices.code, 0) << devices.err;
    const auto refused = devices.json()["refused_packs"];
    ASSERT_EQ(refused.size(), 1u) << devices.out;
    EXPECT_EQ(refused[0]["pack"], pack.string());
    EXPECT_NE(refused[0]["reason"].get<std::string>().find("unsigned"), std::string::npos);
    EXPECT_TRUE(devices.json()["packs"].empty());
    EXPECT_TRUE(run({"devices", "--json"}, false).json()["refused_packs"].empty());
}

}  // namespace
}  // namespace kcache::test
