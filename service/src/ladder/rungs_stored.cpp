// The ladder's stored rungs: the exact binary (the user store's hot copy,
// its SQLite entry, then packs) and an ahead-of-time binary for the
// device's target. A binary this node did not compile, or a user-store
// entry the node has no record of kcache putting there, is checked in the
// kcache-verify helper before this process loads it (binary_vouch.hpp).

#include "binary_vouch.hpp"
#include "kcache/observe/trace.hpp"
#include "observe.hpp"
#include "rungs.hpp"

namespace kcache::service {
namespace {

Rung rung_of(const store::Tier& tier) {
    return tier.kind == store::Tier::Kind::user ? Rung::user_store : Rung::pack;
}

MissCause cause_of(store::MissReason reason) {
    switch (reason) {
        case store::MissReason::not_found:
            return MissCause::not_found;
        case store::MissReason::corrupt:
            return MissCause::corrupt;
        case store::MissReason::collision:
            return MissCause::collision;
        case store::MissReason::io_error:
            return MissCause::io_error;
        case store::MissReason::busy:
            return MissCause::busy;
    }
    return MissCause::other;
}

std::string describe(const store::Miss& miss) {
    std::string s = store::to_string(miss.reason);
    return miss.detail.empty() ? s : s + ": " + miss.detail;
}

// A stored exact binary, `bytes` (`hit`'s own, or where they are read
// from), loaded by the driver; `hit`'s bytes are kept resident. A binary the
// driver rejects is recorded, and dropped from the user store.
std::optional<ProgramRef> load(const RungParts& parts, Ask& ask, store::TieredHit& hit,
                               std::span<const std::uint8_t> bytes) {
    const Plan& plan = ask.planned();
    Outcome& out = ask.out;
    if (hit.tier.kind == store::Tier::Kind::pack) {
        out.misses.emplace_back(Rung::user_store, MissCause::answered_below,
                                "missed (a pack had the entry)");
    }
    // Not compiled here (a pack's, an imported entry), or a user-store entry
    // the node has no record of kcache putting there: checked in the helper first.
    const bool user = hit.tier.kind == store::Tier::Kind::user;
    const bool elsewhere = built_elsewhere(hit.tier, hit.entry.info);
    const bool unrecorded =
        user && !elsewhere && !stored_here(parts.stored.vouched_records(), plan.key);
    auto prog =
        load_checked(parts, ask, bytes, {elsewhere || unrecorded, parts.stored.vouched_dir()});
    if (prog && unrecorded) {  // checked: later processes of the node trust it
        record_stored_here(parts.stored.vouched_dir(), plan.key);
    }
    if (prog) {
        out.rung = rung_of(hit.tier);
        parts.counters.bump(out.rung == Rung::user_store ? Counter::store_hits
                                                         : Counter::pack_hits);
        parts.publish.publish(plan, std::move(hit.entry.bytes), hit.entry.info.provenance, out.rung,
                              Publisher::Share::now, &out.misses);
        return std::move(*prog);
    }
    out.misses.emplace_back(rung_of(hit.tier), MissCause::rejected_by_driver,
                            "driver rejected the binary: " + prog.error());
    parts.publish.record_failure(plan, store::FailureKind::rejected_binary, prog.error(), 0,
                                 &out.misses);
    if (user) {
        parts.publish.remove(plan, &out.misses);
    }
    return std::nullopt;
}

// The user store's hot copy of the entry: no SQLite (see
// Store::get_hot); not for verify_before_use, which reads the store.
std::optional<ProgramRef> from_hot_copy(const RungParts& parts, Ask& ask) {
    const Plan& plan = ask.planned();
    store::Store* user = parts.stored.user();
    if (plan.verified_only || user == nullptr) {
        return std::nullopt;
    }
    // Read into memory the resident bytes will keep, when they keep any;
    // else into memory the thread reuses, which the driver loads from.
    using Memory = store::HotBytes::Memory;
    std::optional<store::HotBytes> read;
    {
        trace::Span span("tier read", "read");  // the read, its checksum and its tag
        read = user->read_hot(plan.key, plan.key_record,
                              parts.resident.keeps_any() ? Memory::kept : Memory::reused);
    }
    if (!read) {
        return std::nullopt;
    }
    store::TieredHit hit{
        store::Entry{{},
                     parts.resident.keeps(read->bytes().size()) ? read->take() : store::Bytes()},
        store::Tier{store::Tier::Kind::user, 0, "user"}};
    const std::span<const std::uint8_t> bytes =
        hit.entry.bytes.empty() ? read->bytes() : std::span<const std::uint8_t>(hit.entry.bytes);
    return load(parts, ask, hit, bytes);
}

// An AOT entry for the plan's target, or nullopt after telling why not.
std::optional<store::TieredHit> find_aot(const RungParts& parts, Ask& ask) {
    const Plan& plan = ask.planned();
    if (!plan.aot_target) {
        ask.out.misses.emplace_back(Rung::aot, MissCause::no_aot_target,
                                    "no AOT target for this device");
        return std::nullopt;
    }
    store::TieredStore& tiers = parts.stored.with_packs();
    // A prebuild that could not target this device says so in its pack: JIT at once.
    if (auto cov = tiers.aot_coverage(*plan.aot_target);
        cov && cov->second.status != store::CoverageStatus::covered) {
        ask.out.misses.emplace_back(
            Rung::aot, MissCause::target_not_covered,
            "pack " + cov->first.string() + " records target " + *plan.aot_target + " as " +
                store::to_string(cov->second.status) + ": " + cov->second.detail);
        return std::nullopt;
    }
    auto aot = tiers.get(aot_key_fields(*plan.aot_target, plan.input));
    if (!aot) {
        ask.out.misses.emplace_back(Rung::aot, MissCause::not_found,
                                    "no AOT binary for target " + *plan.aot_target);
        return std::nullopt;
    }
    return std::move(*aot);
}

}  // namespace

Step StoredRung::attempt(Ask& ask) {
    const Plan& plan = ask.planned();
    if (!plan.use_stored) {
        ask.out.misses.emplace_back(Rung::user_store, MissCause::skipped,
                                    "skipped: quirk no_cached_binaries");
        return Step::miss();
    }
    if (auto prog = from_hot_copy(parts_, ask)) {
        return Step::loaded(std::move(*prog));
    }
    auto hit = [&] {
        trace::Span span("tier read", "read");  // SQLite, then the packs
        return parts_.stored.with_packs().get(plan.fields);
    }();
    ask.entry_stored = hit.ok();
    if (hit && plan.verified_only && hit->entry.info.verification != store::Verification::passed) {
        ask.out.misses.emplace_back(rung_of(hit->tier), MissCause::not_verified,
                                    "entry not verified on the device (quirk verify_before_use)");
    } else if (hit) {
        if (auto prog = load(parts_, ask, *hit, hit->entry.bytes)) {
            return Step::loaded(std::move(*prog));
        }
    } else {
        for (const auto& [tier, miss] : hit.error().misses) {
            ask.out.misses.emplace_back(rung_of(tier), cause_of(miss.reason), describe(miss));
        }
    }
    if (!hit || hit->tier.kind == store::Tier::Kind::pack) {
        for (const RefusedPack& refused : parts_.stored.refused_packs()) {
            ask.out.misses.emplace_back(Rung::pack, MissCause::skipped, describe(refused));
        }
    }
    return Step::miss();
}

Step AotRung::attempt(Ask& ask) {
    const Plan& plan = ask.planned();
    if (!plan.use_stored) {
        return Step::miss();  // the stored rung told why
    }
    auto aot = find_aot(parts_, ask);
    if (!aot) {
        return Step::miss();
    }
    // Built elsewhere (a prebuild's pack): loaded in the helper first.
    auto prog = load_checked(parts_, ask, aot->entry.bytes, {true, parts_.stored.vouched_dir()});
    if (!prog) {
        ask.out.misses.emplace_back(
            Rung::aot, MissCause::rejected_by_driver,
            "driver rejected the AOT binary for " + *plan.aot_target + ": " + prog.error());
        parts_.publish.record_failure(plan, store::FailureKind::rejected_binary, prog.error(), 0,
                                      &ask.out.misses);
        return Step::miss();
    }
    store::Provenance prov = aot->entry.info.provenance;
    prov.origin = store::Origin::aot;
    ask.out.rung = Rung::aot;
    parts_.counters.bump(Counter::aot_hits);
    // Promoted to the exact key, shared, kept resident.
    parts_.publish.publish(plan, std::move(aot->entry.bytes), prov, Rung::aot,
                           Publisher::Share::now, &ask.out.misses);
    return Step::loaded(std::move(*prog));
}

}  // namespace kcache::service
