// CLI tests that need no OpenCL device: argument handling, and the store
// subcommands against a store filled through the store API.

#include <gtest/gtest.h>

#include <fstream>

#include "cli_runner.hpp"
#include "kcache/store/store.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

class Cli : public CliTest {
  protected:
    // Puts entries 0..n-1 (sample_fields) with kernel names "dot:dtype=f32",
    // "conv2d:…" alternating; returns their keys.
    std::vector<ks::Key> fill(int n) {
        auto store = ks::Store::open(store_dir());
        EXPECT_TRUE(store.ok());
        std::vector<ks::Key> keys;
        for (int i = 0; i < n; ++i) {
            ks::KeyFields f = sample_fields(i);
            f.kernel_name = i % 2 == 0 ? "dot:dtype=f32,ls=64" : "conv2d:dtype=f16";
            auto put = store->put(f, binary_like(4096, i), test_provenance());
            EXPECT_TRUE(put.ok());
            keys.push_back(put->key);
        }
        return keys;
    }
};

TEST_F(Cli, EveryCommandHasHelpWithExitCodes) {
    for (const char* name : {"devices", "warm", "prebuild", "get", "ls", "stats", "verify",
                             "explain", "gc", "export", "import", "doctor"}) {
        const CliRun r = kcache({name, "--help"});
        EXPECT_EQ(r.code, 0) << name;
        EXPECT_NE(r.out.find("usage: kcache " + std::string(name)), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("exit codes:"), std::string::npos) << name;
    }
    EXPECT_EQ(kcache({"--help"}).code, 0);
}

TEST_F(Cli, BadCommandLinesAreUsageErrors) {
    const CliRun unknown_command = kcache({"frobnicate"});
    EXPECT_EQ(unknown_command.code, 2);
    EXPECT_NE(unknown_command.err.find("unknown command"), std::string::npos);
    const CliRun unknown_flag = kcache({"ls", "--colour"});
    EXPECT_EQ(unknown_flag.code, 2);
    EXPECT_NE(unknown_flag.err.find("--colour"), std::string::npos);
    const CliRun missing_value = kcache({"ls", "--kernel"});
    EXPECT_EQ(missing_value.code, 2);
    EXPECT_NE(missing_value.err.find("needs a value"), std::string::npos);
    EXPECT_EQ(kcache({"stats", "--json=yes"}).code, 2);
    EXPECT_EQ(kcache({"ls", "--json", "--json"}).code, 2);
    EXPECT_EQ(kcache({"get"}).code, 2);
    EXPECT_EQ(kcache({"gc"}).code, 2);
    EXPECT_EQ(kcache({"gc", "--older-than", "soon"}).code, 2);
    EXPECT_EQ(kcache({"gc", "--max-size", "12Q"}).code, 2);
    EXPECT_EQ(kcache({"verify", "--timeout", "5s"}).code, 2);  // bounds --run only
    EXPECT_EQ(kcache({"verify", "--run", "--timeout", "soon"}).code, 2);
    EXPECT_EQ(kcache({}).code, 2);
}

TEST_F(Cli, JobsZeroIsRefused) {
    const CliRun r = kcache({"prebuild", "--output", (dir() / "p").string(), "--jobs", "0"});
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("--jobs: must be at least 1"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "p"));
}

TEST_F(Cli, LsListsFiltersAndPrintsJson) {
    fill(4);
    const CliRun all = kcache({"ls", "--json"});
    ASSERT_EQ(all.code, 0) << all.err;
    EXPECT_EQ(all.json().size(), 4u);
    const CliRun dot = kcache({"ls", "--json", "--kernel", "dot"});
    ASSERT_EQ(dot.code, 0) << dot.err;
    ASSERT_EQ(dot.json().size(), 2u);
    EXPECT_EQ(dot.json()[0]["kernel"], "dot:dtype=f32,ls=64");
    EXPECT_EQ(dot.json()[0]["verification"], "unverified");
    EXPECT_EQ(kcache({"ls", "--json", "--origin", "aot"}).json().size(), 0u);
    EXPECT_EQ(kcache({"ls", "--origin", "magic"}).code, 2);
    const CliRun text = kcache({"ls"});
    EXPECT_NE(text.out.find("conv2d:dtype=f16"), std::string::npos) << text.out;
}

TEST_F(Cli, StatsJsonCountsEntries) {
    fill(3);
    const CliRun r = kcache({"stats", "--json"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.json()["entries"], 3);
    EXPECT_GT(r.json()["raw_bytes"].get<std::uint64_t>(), 3u * 4000);
    EXPECT_EQ(kcache({"stats"}).code, 0);
}

TEST_F(Cli, GetWritesTheVerifiedBytes) {
    const auto keys = fill(2);
    const std::string prefix = keys[1].hex().substr(0, 12);
    const auto out = dir() / "bin";
    const CliRun r = kcache({"get", prefix, "--output", out.string()});
    ASSERT_EQ(r.code, 0) << r.err;
    const ks::Bytes expected = binary_like(4096, 1);
    EXPECT_EQ(file_bytes(out), std::string(expected.begin(), expected.end()));
    EXPECT_EQ(kcache({"get", "0123456789abcdef"}).code, 3);
    EXPECT_EQ(kcache({"get", "xyz"}).code, 2);
    const CliRun info = kcache({"get", prefix, "--info"});
    EXPECT_EQ(info.json()["key"], keys[1].hex());
}

TEST_F(Cli, GcRemovesByAgeAndSize) {
    fill(3);
    const CliRun none = kcache({"gc", "--older-than", "7d", "--json"});
    ASSERT_EQ(none.code, 0) << none.err;
    EXPECT_EQ(none.json()["removed"], 0);
    const CliRun all = kcache({"gc", "--max-size", "0", "--json"});
    ASSERT_EQ(all.code, 0) << all.err;
    EXPECT_EQ(all.json()["removed"], 3);
    EXPECT_EQ(kcache({"ls", "--json"}).json().size(), 0u);
}

TEST_F(Cli, ExportThenImportIntoAnotherStore) {
    fill(4);
    const auto pack = dir() / "dot.pack";
    const CliRun exported = kcache({"export", pack.string(), "--kernel", "dot"});
    ASSERT_EQ(exported.code, 0) << exported.err;
    EXPECT_EQ(kcache({"export", pack.string()}).code, 2);  // exists
    EXPECT_EQ(kcache({"ls", "--json", "--pack", pack.string()}).json().size(), 2u);
    const std::string other = "KCACHE_DIR=" + (dir() / "other").string();
    const CliRun imported = kcache({"import", pack.string(), "--json"}, {other});
    ASSERT_EQ(imported.code, 0) << imported.err;
    EXPECT_EQ(imported.json()["imported"], 2);
    EXPECT_EQ(kcache({"ls", "--json"}, {other}).json().size(), 2u);
    EXPECT_EQ(kcache({"import", pack.string(), "--json"}, {other}).json()["already_present"], 2);
}

TEST_F(Cli, ImportRefusesMalformedMissingAndNewerPacks) {
    const auto junk = dir() / "junk.pack";
    std::ofstream(junk) << "this is not an SQLite file, just text pretending to be a pack";
    const CliRun malformed = kcache({"import", junk.string()});
    EXPECT_EQ(malformed.code, 4) << malformed.err;
    EXPECT_EQ(kcache({"import", (dir() / "absent.pack").string()}).code, 3);
    fill(1);
    const auto newer = dir() / "newer.pack";
    ASSERT_EQ(kcache({"export", newer.string()}).code, 0);
    raw_sql(newer, "UPDATE schema_version SET version = 999");
    const CliRun refused =
        kcache({"import", newer.string()}, {"KCACHE_DIR=" + (dir() / "o").string()});
    EXPECT_EQ(refused.code, 4);
    EXPECT_NE(refused.err.find("newer"), std::string::npos) << refused.err;
}

TEST_F(Cli, UnusableStoreDirectoryIsAStoreError) {
    std::ofstream(dir() / "file") << "x";
    const CliRun not_a_dir = kcache({"stats"}, {"KCACHE_DIR=" + (dir() / "file" / "s").string()});
    EXPECT_EQ(not_a_dir.code, 4) << not_a_dir.err;
    std::filesystem::create_directories(store_dir());
    std::filesystem::permissions(store_dir(), std::filesystem::perms::all);  // 0777: unsafe
    const CliRun unsafe = kcache({"ls"});
    EXPECT_EQ(unsafe.code, 4) << unsafe.err;
}

TEST_F(Cli, VerifyFindsCorruptEntries) {
    const auto keys = fill(2);
    ASSERT_EQ(kcache({"verify"}).code, 0);
    raw_sql(store_dir() / ks::kStoreFileName,
            "UPDATE entries SET checksum = zeroblob(16) WHERE key = '" + keys[0].hex() + "'");
    const CliRun r = kcache({"verify", "--json"});
    EXPECT_EQ(r.code, 1) << r.err;
    ASSERT_EQ(r.json().size(), 2u);
    int corrupt = 0;
    for (const auto& e : r.json()) {
        corrupt += e["state"] == "corrupt" ? 1 : 0;
    }
    EXPECT_EQ(corrupt, 1);
}

}  // namespace
}  // namespace kcache::test
