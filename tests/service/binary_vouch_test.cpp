// The check of binaries built elsewhere (canary/src/binary_vouch.cpp) on
// PoCL: a pack's binary and an entry imported from a pack are loaded in
// kcache-verify, and for a registry kernel its known-answer test runs there,
// before this process loads them. A truncated binary (PoCL asserts in its
// loader: it would abort this test) and another variant's binary (it loads,
// then computes wrong numbers) stored under a key with a sound checksum are
// misses and a JIT; the program the caller gets passes the known-answer test.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cache_fixture.hpp"
#include "kcache/canary/binary_vouch.hpp"
#include "kcache/cl/kat.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/service/keys.hpp"
#include "kcache/store/pack.hpp"
#include "kcache/store/store.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

// dot in f32 (the variant asked for) and in f16 (another variant: the same
// entry points, other element types; its binary loads under the f32 key and
// computes wrong numbers there).
const kernels::Params kAsked{{"dtype", "f32"}};
const kernels::Params kOther{{"dtype", "f16"}};

KernelRequest request(const kernels::Params& params) {
    return KernelRequest{"dot", {params.begin(), params.end()}, {}, Mode::blocking};
}

class BinaryVouch : public CacheTest {
  protected:
    // The key fields the runtime looks `params` of dot up under on this device.
    store::KeyFields fields_of(const kernels::Params& params) const {
        auto id = device_db::probe(device_);
        auto variant = kernels::make_variant("dot", params);
        EXPECT_TRUE(id && variant);
        auto rendered = kernels::render(*variant);
        EXPECT_TRUE(rendered);
        return device_db::jit_key_fields(
            *id, {variant->id(), rendered->source, rendered->options, rendered->entry_points});
    }

    // The JIT's binary of dot with `params`, built through a cache of its own.
    store::Bytes built(const kernels::Params& params) {
        auto cache = open("builder");
        auto p = cache->program(context_, device_, request(params));
        EXPECT_EQ(p.outcome().rung, Rung::jit) << p.outcome().message;
        cache.reset();
        auto store = store::Store::open(dir() / "builder");
        EXPECT_TRUE(store);
        auto entry = store->get(fields_of(params));
        EXPECT_TRUE(entry) << entry.error().detail;
        return entry ? entry->bytes : store::Bytes{};
    }

    // The two bad binaries for the asked key: {truncated, another variant's}.
    std::vector<std::pair<const char*, store::Bytes>> bad_binaries() {
        store::Bytes asked = built(kAsked);
        asked.resize(asked.size() / 2);
        return {{"truncated", asked}, {"another variant's", built(kOther)}};
    }

    // A pack `name` holding `bytes` under the asked key (checksum sound).
    std::filesystem::path pack_of(const store::Bytes& bytes, const std::string& name) {
        const auto store_dir = dir() / ("pack-" + name);
        {
            auto store = store::Store::open(store_dir);
            EXPECT_TRUE(store);
            EXPECT_TRUE(store->put(fields_of(kAsked), bytes, {}));
            EXPECT_TRUE(store->export_pack(dir() / (name + ".kcpack")));
        }
        return dir() / (name + ".kcpack");
    }

    // Asks for the f32 dot: a JIT that missed on `rung` because the binary
    // was rejected, whose program passes the known-answer test.
    void expect_jit_after_rejection(Cache& cache, Rung rung, const char* what) {
        auto p = cache.program(context_, device_, request(kAsked));
        ASSERT_TRUE(p.ok()) << what << ": " << p.outcome().message;
        EXPECT_EQ(p.outcome().rung, Rung::jit) << what;
        EXPECT_TRUE(missed_with(p.outcome(), rung, MissCause::rejected_by_driver, "kcache-verify"))
            << what;
        auto variant = kernels::make_variant("dot", kAsked);
        ASSERT_TRUE(variant);
        const cl::KatResult kat = cl::run_kat(context_, device_, p.get(), *variant);
        EXPECT_EQ(kat.state, cl::KatState::passed) << what << ": " << kat.detail;
    }
};

TEST_F(BinaryVouch, APackBinaryThatCannotLoadOrComputesWrongNumbersIsAMissAndAJit) {
    int n = 0;
    for (const auto& [what, bytes] : bad_binaries()) {
        const std::string name = "p" + std::to_string(n++);
        Config c = config("fresh-" + name);
        c.packs = {pack_of(bytes, name)};
        auto cache = open(c);
        expect_jit_after_rejection(*cache, Rung::pack, what);
    }
}

TEST_F(BinaryVouch, AnImportedEntryIsCheckedAtItsFirstUseAndReplacedWhenBad) {
    int n = 0;
    for (const auto& [what, bytes] : bad_binaries()) {
        const std::string name = "i" + std::to_string(n++);
        const auto store_dir = dir() / ("user-" + name);
        {
            auto user = store::Store::open(store_dir);
            ASSERT_TRUE(user);
            auto pack = store::Pack::open(pack_of(bytes, name));
            ASSERT_TRUE(pack);
            auto imported = user->import_pack(*pack);
            ASSERT_TRUE(imported && imported->imported == 1u);
            // Not checked on this node: no hot copy answers for it.
            EXPECT_FALSE(user->get_hot(fields_of(kAsked))) << what;
        }
        auto cache = open("user-" + name);
        expect_jit_after_rejection(*cache, Rung::user_store, what);
        cache.reset();
        auto user = store::Store::open(store_dir);
        auto entry = user->get(fields_of(kAsked));
        ASSERT_TRUE(entry) << what;
        EXPECT_EQ(entry->info.provenance.origin, store::Origin::jit) << what << ": not replaced";
    }
}

// A hot copy of an imported entry (an older kcache kept them; this one writes
// none before the entry passed its check) never answers: the copies of a
// directory stamped by another version go, and a copy that answers with the
// store open is checked against its entry's trust.
TEST_F(BinaryVouch, AHotCopyOfAnImportedEntryNeverAnswers) {
    int n = 0;
    for (const auto& [what, bytes] : bad_binaries()) {
        const std::string name = "h" + std::to_string(n++);
        const auto store_dir = dir() / ("user-" + name);
        {
            // Stored as this node's own (a copy is written), then marked imported.
            auto user = store::Store::open(store_dir);
            ASSERT_TRUE(user);
            ASSERT_TRUE(user->put(fields_of(kAsked), bytes, {}));
            ASSERT_TRUE(user->get_hot(fields_of(kAsked))) << what;
        }
        raw_sql(store_dir / store::kStoreFileName, "UPDATE entries SET origin = 2");
        // As an older kcache stamped it.
        std::filesystem::path stamp;
        for (const auto& d : std::filesystem::directory_iterator(store_dir / "hot")) {
            stamp = d.path() / "STAMP";
        }
        ASSERT_TRUE(std::filesystem::exists(stamp));
        std::string text;
        std::getline(std::ifstream(stamp), text);
        ASSERT_EQ(text.rfind("kcache hot copies 3, ", 0), 0u) << text;
        std::ofstream(stamp, std::ios::trunc) << "kcache hot copies 2, " << text.substr(21) << "\n";
        auto cache = open("user-" + name);
        expect_jit_after_rejection(*cache, Rung::user_store, what);
    }
}

// A hot copy crafted over a good entry's (its checksum recomputed over a
// truncated or another variant's binary) never reaches the driver: a fresh
// process's first hit, before SQLite opens, refuses it by its tag, the entry
// answers from SQLite, and the program passes the known-answer test.
TEST_F(BinaryVouch, ACraftedHotCopyIsNeverLoaded) {
    int n = 0;
    for (const auto& [what, bytes] : bad_binaries()) {
        const std::string name = "crafted-" + std::to_string(n++);
        {
            auto cache = open(name);
            auto p = cache->program(context_, device_, request(kAsked));
            ASSERT_TRUE(p.ok()) << p.outcome().message;
            ASSERT_EQ(p.outcome().rung, Rung::jit);
        }
        const auto copies = hot_copies(dir() / name);
        ASSERT_EQ(copies.size(), 1u) << what;
        craft_hot_copy(copies.front(), bytes);
        auto cache = open(name);
        auto p = cache->program(context_, device_, request(kAsked));
        ASSERT_TRUE(p.ok()) << what << ": " << p.outcome().message;
        EXPECT_EQ(p.outcome().rung, Rung::user_store) << what;
        auto variant = kernels::make_variant("dot", kAsked);
        ASSERT_TRUE(variant);
        const cl::KatResult kat = cl::run_kat(context_, device_, p.get(), *variant);
        EXPECT_EQ(kat.state, cl::KatState::passed) << what << ": " << kat.detail;
    }
}

TEST_F(BinaryVouch, AGoodVerdictIsKeptForTheNodeByCheckKeyAndBytes) {
    const store::Bytes good = built(kAsked);
    Config c = config("fresh");
    c.packs = {pack_of(good, "good")};
    {
        auto cache = open(c);
        auto p = cache->program(context_, device_, request(kAsked));
        ASSERT_TRUE(p.ok()) << p.outcome().message;
        EXPECT_EQ(p.outcome().rung, Rung::pack);
    }
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir() / "fresh" / "vouched")) {
        names.push_back(e.path().filename().string());
    }
    ASSERT_EQ(names.size(), 1u);
    EXPECT_EQ(names[0].rfind(store::make_key(fields_of(kAsked)).hex() + ".", 0), 0u) << names[0];
    EXPECT_TRUE(service::kat_variant_of(fields_of(kAsked))) << "the test ran, not a load only";
}

}  // namespace
}  // namespace kcache::test
