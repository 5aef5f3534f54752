// `kcache errata list | export | import` through the built CLI: a round trip
// from one node's store to another's through a signed file and through a
// signed pack, a tampered or unsigned file refused (and nothing kept), usage
// errors; and `kcache warm` under enforce answering a kernel an imported
// erratum covers driver_suspect, `kcache explain` naming the erratum; and
// the feed's order: a replayed older version and an expired document
// refused with the errata in force kept, doctor showing version and age.

#include <gtest/gtest.h>

#include <ctime>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "canary_support.hpp"
#include "kcache/canary/errata.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/store/store.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

using nlohmann::json;

class ErrataCli : public TempDirTest {
  protected:
    // `kcache args…` with KCACHE_DIR=`store` and `env` besides.
    compiler::RunResult kcache(const std::vector<std::string>& args, const std::string& store,
                               std::vector<std::string> env = {}) const {
        compiler::SpawnSpec spec;
        spec.program = KCACHE_CLI_PATH;
        spec.args = args;
        env.push_back("KCACHE_DIR=" + (dir() / store).string());
        env.push_back("KCACHE_TRUSTED_KEYS=" + (dir() / "k.pub").string());
        spec.env_overrides = std::move(env);
        return compiler::run(spec, compiler::Clock::now() + std::chrono::seconds(120));
    }
    // The ids `errata list --json` prints for `store`.
    std::vector<std::string> listed(const std::string& store) const {
        auto r = kcache({"errata", "list", "--json"}, store);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::vector<std::string> ids;
        for (const json& e : json::parse(r.out)) {
            ids.push_back(e.at("id").get<std::string>());
        }
        return ids;
    }
    // A hand-written, unsigned errata file at `name` with one erratum for dot.
    std::filesystem::path plain_file(const std::string& name, std::uint32_t vendor_id) const {
        errata::Erratum e;
        e.vendor_id = vendor_id;
        e.kernel = "dot";
        e.driver_min = "1.0";
        e.check = "result";
        e.evidence = "a vendor's bulletin";
        EXPECT_TRUE(errata::write_file(dir() / name, {e}, nullptr));
        id_ = e.id();
        return dir() / name;
    }
    mutable std::string id_;
};

TEST_F(ErrataCli, ListExportImportRoundTripAndATamperedFileIsRefused) {
    ASSERT_EQ(kcache({"keygen", "--output", (dir() / "k").string()}, "a").exit_code, 0);
    const auto plain = plain_file("plain.json", 0x10006);
    auto r = kcache({"errata", "import", plain.string()}, "a");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("imported 1 errata"), std::string::npos) << r.out;
    EXPECT_EQ(listed("a"), std::vector<std::string>{id_});

    const auto signed_file = dir() / "signed.json";
    r = kcache({"errata", "export", signed_file.string(), "--key", (dir() / "k.key").string()},
               "a");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(std::filesystem::exists(signed_file.string() + ".minisig"));
    const std::vector<std::string> required = {"KCACHE_REQUIRE_SIGNED_PACKS=1"};
    r = kcache({"errata", "import", signed_file.string()}, "b", required);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("trusted key"), std::string::npos) << r.out;
    EXPECT_EQ(listed("b"), std::vector<std::string>{id_});

    r = kcache({"errata", "import", plain.string()}, "c", required);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("unsigned"), std::string::npos) << r.err;
    std::string text;
    {
        std::ifstream in(signed_file);
        text.assign(std::istreambuf_iterator<char>(in), {});
    }
    text.replace(text.find("\"1.0\""), 5, "\"0.1\"");  // every driver since 0.1
    std::ofstream(signed_file, std::ios::trunc) << text;
    r = kcache({"errata", "import", signed_file.string()}, "c");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("refused: invalid signature"), std::string::npos) << r.err;
    EXPECT_TRUE(listed("c").empty());

    EXPECT_EQ(kcache({"errata", "export", (dir() / "x.json").string()}, "a").exit_code, 2);
    std::filesystem::rename(signed_file, dir() / "moved.json");  // its signature stays
    r = kcache({"errata", "export", signed_file.string(), "--unsigned"}, "a");
    EXPECT_EQ(r.exit_code, 2);  // never a file beside another file's signature
    EXPECT_NE(r.err.find("remove it first"), std::string::npos) << r.err;
    EXPECT_EQ(kcache({"errata", "list", "--key", "k"}, "a").exit_code, 2);
    EXPECT_EQ(kcache({"errata", "frob"}, "a").exit_code, 2);
    EXPECT_EQ(kcache({"errata", "import", (dir() / "none.json").string()}, "a").exit_code, 3);
}

TEST_F(ErrataCli, APackCarriesErrataToAnotherNode) {
    ASSERT_EQ(kcache({"keygen", "--output", (dir() / "k").string()}, "a").exit_code, 0);
    ASSERT_EQ(
        kcache({"errata", "import", plain_file("plain.json", 0x10006).string()}, "a").exit_code, 0);
    auto source = store::Store::open(dir() / "source");
    ASSERT_TRUE(source);
    const auto pack = dir() / "p.kcpack";
    ASSERT_TRUE(source->export_pack(pack));
    auto r = kcache(
        {"errata", "export", "--pack", pack.string(), "--key", (dir() / "k.key").string()}, "a");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = kcache({"errata", "import", pack.string()}, "b", {"KCACHE_REQUIRE_SIGNED_PACKS=1"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(listed("b"), std::vector<std::string>{id_});
    // The runtime's packs are listed with their errata too.
    r = kcache({"errata", "list"}, "c", {"KCACHE_PACKS=" + pack.string()});
    EXPECT_NE(r.out.find("source: pack " + pack.string()), std::string::npos) << r.out;
}

// doctor's errata feed lines for `store` ("version 2 from key …, …").
std::vector<std::string> feed_lines(const compiler::RunResult& doctor) {
    std::vector<std::string> lines;
    for (const json& f : json::parse(doctor.out)) {
        if (f.at("section") == "errata") {
            lines.push_back(f.at("value").get<std::string>() + " [" +
                            f.at("level").get<std::string>() + "]");
        }
    }
    return lines;
}

TEST_F(ErrataCli, AReplayedOlderFeedOrAnExpiredOneIsRefusedAndTheErrataInForceKept) {
    ASSERT_EQ(kcache({"keygen", "--output", (dir() / "k").string()}, "a").exit_code, 0);
    ASSERT_EQ(
        kcache({"errata", "import", plain_file("plain.json", 0x10006).string()}, "a").exit_code, 0);
    const std::string key = (dir() / "k.key").string();
    const std::string soon = errata::format_utc(std::time(nullptr) + 30 * 86400);
    auto exported = [&](const std::string& name, std::vector<std::string> stamp) {
        std::vector<std::string> args = {"errata", "export", (dir() / name).string(), "--key", key};
        args.insert(args.end(), stamp.begin(), stamp.end());
        auto r = kcache(args, "a");
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return (dir() / name).string();
    };
    const auto v2 = exported("v2.json", {"--version", "2", "--expires", soon});
    const auto v1 = exported("v1.json", {"--version", "1"});
    const auto expired =
        exported("v3.json", {"--version", "3", "--expires", "2020-01-01T00:00:00Z"});

    auto r = kcache({"errata", "import", v2}, "b");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("version 2 of its feed"), std::string::npos) << r.out;
    r = kcache({"errata", "import", v1}, "b");  // a replay of an older publication
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("version 1 of feed"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("older than version 2 in force"), std::string::npos) << r.err;
    r = kcache({"errata", "import", expired}, "b");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("stale: it expired at 2020-01-01T00:00:00Z"), std::string::npos) << r.err;
    EXPECT_EQ(listed("b"), std::vector<std::string>{id_});  // what was in force stays
    auto lines = feed_lines(kcache({"doctor", "--json"}, "b"));
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0].rfind("version 2 from key ", 0), 0u) << lines[0];
    EXPECT_NE(lines[0].find(", imported "), std::string::npos) << lines[0];
    // 30 days from export, less the seconds since (29 or 30 whole days).
    EXPECT_TRUE(lines[0].find(", expires in 29 d [ok]") != std::string::npos ||
                lines[0].find(", expires in 30 d [ok]") != std::string::npos)
        << lines[0];

    // A feed in force that expires later is reported stale; its errata still apply.
    const auto brief = exported(
        "brief.json", {"--version", "4", "--expires", errata::format_utc(std::time(nullptr) + 2)});
    ASSERT_EQ(kcache({"errata", "import", brief}, "b").exit_code, 0);
    std::this_thread::sleep_for(std::chrono::seconds(3));
    lines = feed_lines(kcache({"doctor", "--json"}, "b"));
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_NE(lines[0].find("version 4"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("stale: expired "), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("[note]"), std::string::npos) << lines[0];
    EXPECT_EQ(listed("b"), std::vector<std::string>{id_});

    for (const std::vector<std::string>& bad : {std::vector<std::string>{"--version", "0"},
                                                {"--version", "x"},
                                                {"--expires", "2027-02-30T00:00:00Z"},
                                                {"--expires", "tomorrow"}}) {
        std::vector<std::string> args = {"errata", "export", (dir() / "bad.json").string(), "--key",
                                         key};
        args.insert(args.end(), bad.begin(), bad.end());
        r = kcache(args, "a");
        EXPECT_EQ(r.exit_code, 2) << bad[1] << ": " << r.err;
        EXPECT_FALSE(std::filesystem::exists(dir() / "bad.json"));
    }
}

TEST_F(ErrataCli, WarmUnderEnforceAnswersACoveredKernelDriverSuspect) {
    const auto file = plain_file("plain.json", canary::driver_identity(test_device()).vendor_id);
    ASSERT_EQ(kcache({"errata", "import", file.string()}, "a").exit_code, 0);
    auto r = kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json", "--quiet"}, "a",
                    {"KCACHE_CANARY=enforce"});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("erratum " + id_), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("not served (KCACHE_CANARY=enforce)"), std::string::npos) << r.out;
    r = kcache({"explain", "dot"}, "a");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("erratum " + id_ + " (import "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kcache::test
