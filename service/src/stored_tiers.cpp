// The stored tiers: the user store, and packs opened at the first need.

#include "stored_tiers.hpp"

#include "kcache/common/log.hpp"

namespace kcache::service {
namespace {

// Opens every pack file of `files` that the signature policy admits (their
// errata to `carried_errata`); the others go to `refused` with the reason,
// for the ladder's misses.
std::vector<store::Pack> open_packs(const std::vector<std::filesystem::path>& files,
                                    const Config& config, std::vector<RefusedPack>& refused,
                                    std::vector<errata::Erratum>& carried_errata) {
    const auto policy = signature_policy(config);
    std::optional<store::TrustedKeys> keys;
    std::vector<store::Pack> packs;
    for (const auto& f : files) {
        if (!keys) {  // read only when there is a pack to judge
            keys = trusted_keys(config);
            for (const std::string& problem : keys->problems()) {
                logging::warning("trusted keys: " + problem);
            }
        }
        // Checked and read over one descriptor: what was checked is what is used.
        auto checked = store::open_checked_pack(f, *keys, policy);
        if (checked.refused) {
            refused.push_back({f, *checked.refused});
            logging::warning(describe(refused.back()));
            continue;
        }
        if (checked.signature.state == store::SignatureState::invalid) {
            logging::warning("pack " + f.string() + " has an invalid signature (" +
                             checked.signature.detail +
                             "); used because signed packs are not required");
        }
        if (checked.pack) {
            // The errata it carries are covered by the signature just checked.
            auto carried = errata::of_pack_document(f, checked.pack->errata_document());
            if (carried) {
                errata::merge(carried_errata, *carried);
            } else {
                logging::warning(carried.error().message + "; the pack is used without them");
            }
            packs.push_back(std::move(*checked.pack));
        } else {
            logging::warning("skipping pack " + f.string() + ": " + checked.error);
        }
    }
    return packs;
}

}  // namespace

StoredTiers::StoredTiers(const Config& config, store::TieredStore tiers)
    : config_(config), tiers_(std::move(tiers)), vouched_(config.dir / "vouched") {}

void StoredTiers::open_user_in_background() {
    if (store::Store* user = tiers_.user()) {
        user->open_in_background();
    }
}

store::TieredStore& StoredTiers::with_packs() {
    std::call_once(packs_opened_, [this] {
        tiers_.add_packs(open_packs(runtime_pack_files(config_), config_, refused_, errata_));
    });
    return tiers_;
}

store::Store* StoredTiers::writable_user() {
    store::Store* user = tiers_.user();
    return user != nullptr && user->mode() == store::OpenMode::read_write ? user : nullptr;
}

const std::filesystem::path& StoredTiers::vouched_dir() {
    return writable_user() != nullptr ? vouched_ : none_;
}

const std::filesystem::path& StoredTiers::vouched_records() {
    return tiers_.user() != nullptr ? vouched_ : none_;
}

}  // namespace kcache::service
