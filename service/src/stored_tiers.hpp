#pragma once
// The stored tiers a cache reads: the user store, then packs. Packs
// (installed, KCACHE_PACKS) are opened at the first request that reaches
// them, not by Cache::open: a hit in the user store never needs them, and
// opening one costs a signature check and an SQLite open.

#include <filesystem>
#include <mutex>
#include <vector>

#include "kcache/canary/errata.hpp"
#include "kcache/canary/pack_trust.hpp"
#include "kcache/service/service_api.hpp"
#include "kcache/store/pack.hpp"

namespace kcache::service {

class StoredTiers {
  public:
    // `config` must outlive this object.
    StoredTiers(const Config& config, store::TieredStore tiers);

    // Starts opening the user store's SQLite connection on a thread of its
    // own (Store::open_in_background), for a later request that needs it and
    // the write-back; a request that needs it first opens it then.
    void open_user_in_background();
    // The tiers, with the packs opened (once) for every caller after the first.
    store::TieredStore& with_packs();
    // The tiers as they are (packs maybe not opened yet): for the user store.
    store::TieredStore& tiers() { return tiers_; }
    // The user store, or null.
    store::Store* user() { return tiers_.user(); }
    // The user store when it may be written (not read-only), else null.
    store::Store* writable_user();
    // Packs the signature policy kept out, once with_packs() ran.
    const std::vector<RefusedPack>& refused_packs() const { return refused_; }
    // The errata the admitted packs carry, once with_packs() ran (a pack whose
    // errata do not parse is used without them, with a logged warning).
    const std::vector<errata::Erratum>& pack_errata() const { return errata_; }
    // Where good load checks of binaries built elsewhere are kept for the
    // node (binary_vouch.hpp): beside a writable user store; empty without one.
    const std::filesystem::path& vouched_dir();
    // Where those verdicts and the records that kcache put a user-store
    // entry (stored_here) are read: beside the user store, writable or not;
    // empty without one. (Made once: every store hit reads a record there.)
    const std::filesystem::path& vouched_records();

  private:
    const Config& config_;
    store::TieredStore tiers_;
    const std::filesystem::path vouched_;
    const std::filesystem::path none_;
    std::once_flag packs_opened_;
    std::vector<RefusedPack> refused_;
    std::vector<errata::Erratum> errata_;
};

}  // namespace kcache::service
