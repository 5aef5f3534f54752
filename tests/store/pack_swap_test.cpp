// A pack replaced while its signature is checked: another (valid, unsigned)
// pack renamed over the signed one at many moments of the check is either
// refused or never read, because the signature is checked over the one
// descriptor SQLite reads (open_checked_pack, Pack::open(int, path)).

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>

#include "kcache/store/trust.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class StorePackSwap : public TempDirTest {
  protected:
    // A pack of three large entries (so that hashing it takes a while) whose
    // bytes come from `seed`.
    fs::path make_pack(const std::string& name, std::uint64_t seed) {
        auto store = ks::Store::open(dir() / ("store-" + name), ks::Policy{});
        EXPECT_TRUE(store.ok());
        for (int i = 0; i < 3; ++i) {
            EXPECT_TRUE(
                store->put(sample_fields(i), binary_like(4 << 20, seed + i), test_provenance())
                    .ok());
        }
        const fs::path pack = dir() / (name + ".kcpack");
        EXPECT_TRUE(store->export_pack(pack).ok());
        return pack;
    }
};

TEST_F(StorePackSwap, APackRenamedOverTheSignedOneDuringItsCheckIsNeverUsed) {
    auto key = ks::generate_key();
    ASSERT_TRUE(key.ok());
    const fs::path signed_pack = make_pack("signed", 1);
    ASSERT_TRUE(ks::sign_pack(signed_pack, *key).ok());
    const fs::path altered = make_pack("altered", 100);  // the same keys, other binaries
    ks::TrustedKeys keys;
    keys.add({key->public_key(), dir() / "k.pub"});
    const ks::Bytes genuine = binary_like(4 << 20, 1);

    const fs::path live = dir() / "live.kcpack";
    const fs::path next = dir() / "next.kcpack";
    auto stage = [&] {
        fs::remove(live);
        fs::copy_file(signed_pack, live);
        fs::copy_file(ks::signature_path(signed_pack), ks::signature_path(live),
                      fs::copy_options::overwrite_existing);
        fs::remove(next);
        fs::copy_file(altered, next);
    };
    // How long one check and open takes, to spread the swaps over it.
    stage();
    const auto t0 = Clock::now();
    ASSERT_TRUE(ks::open_checked_pack(live, keys, ks::SignaturePolicy::require_trusted).pack);
    const auto check = Clock::now() - t0;

    constexpr int kRounds = 80;
    int used = 0;
    int refused = 0;
    for (int i = 0; i < kRounds; ++i) {
        stage();
        // The swap from about 0.2 checks before the check starts to 1.3 checks after.
        const auto at = check * (i % 40 - 6) / 26;
        std::thread swapper([&] {
            std::this_thread::sleep_for(std::max(at, Clock::duration::zero()));
            std::rename(next.c_str(), live.c_str());
        });
        std::this_thread::sleep_for(std::max(-at, Clock::duration::zero()));
        auto checked = ks::open_checked_pack(live, keys, ks::SignaturePolicy::require_trusted);
        swapper.join();
        if (!checked.pack) {
            ++refused;
            continue;
        }
        ++used;
        auto entry = checked.pack->get(sample_fields(0));
        ASSERT_TRUE(entry.ok()) << "round " << i;
        ASSERT_EQ(entry->bytes, genuine) << "round " << i << ": the altered pack answered";
    }
    std::printf(
        "swap at -0.2 to 1.3 times a %lld us check: %d used (the signed bytes), %d refused\n",
        static_cast<long long>(
            std::chrono::duration_cast<std::chrono::microseconds>(check).count()),
        used, refused);
    EXPECT_EQ(used + refused, kRounds);
}

}  // namespace
}  // namespace kcache::test
