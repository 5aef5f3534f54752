// The composition root: each store setting has the same effect through the
// library (the parts Cache::open is made of, from the same environment) and
// through every CLI command that opens the user store.

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>

#include "cli_runner.hpp"
#include "kcache/service/parts.hpp"
#include "kcache/store/store.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

// Every CLI command that opens the user store, as run on a store of three
// entries (`key` is one of them, `pack` a pack of them to import).
std::vector<std::vector<std::string>> store_commands(const std::string& key,
                                                     const std::string& pack,
                                                     const std::string& out) {
    return {{"ls"},
            {"stats"},
            {"get", key, "--output", out},
            {"verify"},
            {"gc", "--max-size", "1G"},
            {"export", out + ".kcpack"},
            {"import", pack}};
}

class CliSettings : public CliTest {
  protected:
    void SetUp() override {
        CliTest::SetUp();
        // A pack of three entries, built in a store of its own.
        auto source = ks::Store::open(dir() / "source");
        ASSERT_TRUE(source.ok());
        for (int i = 0; i < 3; ++i) {
            auto put = source->put(sample_fields(i), binary_like(4096, i), test_provenance());
            ASSERT_TRUE(put.ok());
            keys_.push_back(put->key.hex());
        }
        pack_ = dir() / "three.kcpack";
        ASSERT_TRUE(source->export_pack(pack_).ok());
    }
    // A fresh user store holding the three entries, and no hot copies.
    void fresh_store() {
        std::filesystem::remove_all(store_dir());
        ks::Policy none;
        none.max_hot_bytes = 0;
        auto store = ks::Store::open(store_dir(), none);
        ASSERT_TRUE(store.ok());
        ASSERT_TRUE(store->import_pack(pack_).ok());
        ASSERT_TRUE(hot_copies(store_dir()).empty());
    }
    std::size_t entries() {
        return std::stoul(
            raw_sql(store_dir() / ks::kStoreFileName, "SELECT count(*) FROM entries"));
    }
    // The library's user store under the environment `setting` ("NAME=value"),
    // through the composition root from the same environment parser.
    void library_put(const std::string& setting, int first, int count) {
        const auto eq = setting.find('=');
        const std::string name = setting.substr(0, eq);
        ::setenv("KCACHE_DIR", store_dir().c_str(), 1);
        ::setenv(name.c_str(), setting.substr(eq + 1).c_str(), 1);
        Config c;
        std::string error;
        const bool loaded = load_config(c, error);
        ::unsetenv(name.c_str());
        ::unsetenv("KCACHE_DIR");
        ASSERT_TRUE(loaded) << error;
        auto parts = service::open_parts(c);
        ASSERT_TRUE(parts) << parts.error().message;
        for (int i = first; i < first + count; ++i) {
            (void)parts->tiers.user()->put(sample_fields(i), binary_like(4096, i),
                                           test_provenance());
        }
    }
    std::vector<std::string> keys_;
    std::filesystem::path pack_;
};

TEST_F(CliSettings, NoHotCopiesWhenTheirBoundIsZero) {
    const std::string out = (dir() / "got").string();
    for (const auto& args : store_commands(keys_[0], pack_.string(), out)) {
        std::filesystem::remove_all(out + ".kcpack");
        fresh_store();
        const CliRun r = kcache(args, {"KCACHE_MAX_HOT_BYTES=0"});
        EXPECT_EQ(r.code, 0) << args[0] << ": " << r.err;
        EXPECT_TRUE(hot_copies(store_dir()).empty()) << "kcache " << args[0];
    }
    // Imported entries get no copy until this node has checked them
    // (docs/design.md), whatever the bound.
    std::filesystem::remove_all(store_dir());
    ASSERT_EQ(kcache({"import", pack_.string()}).code, 0);
    EXPECT_TRUE(hot_copies(store_dir()).empty()) << "import, default bound";

    // Entries this node built get copies under the default bound: the check can see them.
    std::filesystem::remove_all(store_dir());
    library_put("KCACHE_MAX_HOT_BYTES=0", 0, 3);
    EXPECT_TRUE(hot_copies(store_dir()).empty()) << "the library";
    library_put("KCACHE_MAX_HOT_BYTES=64M", 3, 1);
    EXPECT_EQ(hot_copies(store_dir()).size(), 1u) << "the library, default bound";
}

TEST_F(CliSettings, ReadOnlyWritesNothing) {
    const std::string out = (dir() / "got").string();
    for (const auto& args : store_commands(keys_[0], pack_.string(), out)) {
        std::filesystem::remove_all(out + ".kcpack");
        fresh_store();
        ASSERT_EQ(raw_sql(store_dir() / ks::kStoreFileName, "DELETE FROM entries"), "");
        const CliRun r = kcache(args, {"KCACHE_READONLY=1"});
        EXPECT_EQ(entries(), 0u) << "kcache " << args[0] << " wrote under KCACHE_READONLY";
        EXPECT_TRUE(hot_copies(store_dir()).empty()) << "kcache " << args[0];
        if (args[0] == "import") {
            EXPECT_NE(r.code, 0) << "an import that stored nothing reported success";
        }
    }
    library_put("KCACHE_READONLY=1", 0, 3);
    EXPECT_EQ(entries(), 0u) << "the library wrote under KCACHE_READONLY";
}

TEST_F(CliSettings, TheSizeBoundHoldsForImportAndTheLibrary) {
    std::filesystem::remove_all(store_dir());
    const CliRun r = kcache({"import", pack_.string(), "--json"}, {"KCACHE_MAX_SIZE=4000"});
    EXPECT_EQ(r.code, 0) << r.err;
    const std::size_t by_cli = entries();
    EXPECT_LT(by_cli, 3u) << "three entries of about 2 KB stored each, under a 4000-byte bound";

    std::filesystem::remove_all(store_dir());
    library_put("KCACHE_MAX_SIZE=4000", 0, 3);
    EXPECT_EQ(entries(), by_cli) << "the library keeps as many as the CLI";
}

}  // namespace
}  // namespace kcache::test
