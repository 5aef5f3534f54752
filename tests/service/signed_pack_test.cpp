// The signature policy at run time on PoCL: a pack the policy refuses is left
// out of the ladder and the outcome's misses name it with the reason; with the
// policy off, or with a valid trusted signature, the pack answers.

#include <gtest/gtest.h>

#include <fstream>

#include "cache_fixture.hpp"
#include "kcache/store/pack.hpp"
#include "kcache/store/trust.hpp"

namespace kcache::test {
namespace {

class ServiceSignedPacks : public CacheTest {
  protected:
    void SetUp() override {
        CacheTest::SetUp();
        {
            auto cache = open("builder");
            auto build = request();
            build.mode = Mode::blocking;
            auto built = cache->program(context_, device_, build);
            ASSERT_TRUE(built.ok()) << built.outcome().message;
        }
        auto builder = store::Store::open(dir() / "builder");
        ASSERT_TRUE(builder);
        pack_ = dir() / "system.kcpack";
        ASSERT_TRUE(builder->export_pack(pack_));
        auto key = store::generate_key();
        ASSERT_TRUE(key);
        key_ = *key;
        std::ofstream(dir() / "k.pub") << store::format_public_key(key_.public_key());
    }
    static SourceRequest request() {
        SourceRequest r;
        r.name = "scale";
        r.source = scale_source(11);
        r.entry_points = {"scale"};
        r.mode = Mode::fail_fast;  // never compile: the pack answers or nothing does
        return r;
    }
    // The outcome of a fresh cache (its own empty user store) over the pack.
    Outcome lookup(bool require, bool trust) {
        auto c = config("fresh-" + std::to_string(n_++));
        c.packs = {pack_};
        c.require_signed_packs = require;
        if (trust) {
            c.trusted_keys = {dir() / "k.pub"};
        }
        Outcome o;
        auto cache = Cache::open(c, &o);
        EXPECT_TRUE(cache) << o.message;
        return cache ? cache->program(context_, device_, request()).outcome() : o;
    }
    // The ladder's line about the pack skipped by the policy ("" when none).
    std::string skipped(const Outcome& o) const {
        for (const RungMiss& m : o.misses) {
            if (m.rung == Rung::pack && m.cause == MissCause::skipped &&
                m.detail.find(pack_.string() + " skipped") != std::string::npos) {
                return m.detail;
            }
        }
        return "";
    }
    std::filesystem::path pack_;
    store::SecretKey key_;
    int n_ = 0;
};

TEST_F(ServiceSignedPacks, AnUnsignedPackIsUsedWithoutThePolicyAndSkippedWithIt) {
    Outcome o = lookup(false, true);
    EXPECT_EQ(o.status, StatusCode::ok) << o.message;
    EXPECT_EQ(o.rung, Rung::pack);
    EXPECT_EQ(skipped(o), "");

    o = lookup(true, true);
    EXPECT_EQ(o.status, StatusCode::not_cached);
    EXPECT_NE(skipped(o).find("unsigned"), std::string::npos) << skipped(o);
}

TEST_F(ServiceSignedPacks, ATrustedSignatureAdmitsThePackAndEveryFlawKeepsItOut) {
    ASSERT_TRUE(store::sign_pack(pack_, key_));
    Outcome o = lookup(true, true);
    EXPECT_EQ(o.status, StatusCode::ok) << o.message;
    EXPECT_EQ(o.rung, Rung::pack);
    EXPECT_EQ(skipped(o), "");

    o = lookup(true, false);  // the signer's key is not trusted
    EXPECT_EQ(o.status, StatusCode::not_cached);
    EXPECT_NE(skipped(o).find("which is not trusted"), std::string::npos) << skipped(o);

    std::string bytes;
    {
        std::ifstream in(pack_, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    std::filesystem::permissions(pack_, std::filesystem::perms::owner_write,
                                 std::filesystem::perm_options::add);
    bytes[bytes.size() - 100] ^= 0x01;  // a byte of the stored blob
    std::ofstream(pack_, std::ios::binary | std::ios::trunc) << bytes;
    o = lookup(true, true);
    EXPECT_EQ(o.status, StatusCode::not_cached);
    EXPECT_NE(skipped(o).find("does not match its signature"), std::string::npos) << skipped(o);
    // Without the policy the altered pack is still searched (its entries carry
    // their own checksums); the signature is reported, not taken as valid.
    o = lookup(false, true);
    EXPECT_EQ(skipped(o), "");
}

}  // namespace
}  // namespace kcache::test
