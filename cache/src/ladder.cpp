// The lookup ladder (docs/design.md, "The lookup ladder"): in-process programs,
// exact native binaries (user store, then packs, then the remote tier), AOT binaries for the
// device's target, fresh failure records, then JIT under the deadline.
// Every rung that misses leaves its reason in the outcome.

#include "binary_vouch.hpp"
#include "cache_impl.hpp"

namespace kcache {
namespace {

constexpr auto kWatchdogGrace = std::chrono::milliseconds(250);

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

}  // namespace

Result<device_db::DeviceIdentity, std::string> Cache::Impl::identity(cl_device_id device) {
    // Root devices live as long as the process and their identity cannot
    // change, so every Cache of the process shares one probe per device (a
    // probe is ~20 driver queries). Sub-devices are probed per Cache.
    static std::mutex shared_mu;
    static std::map<cl_device_id, device_db::DeviceIdentity> shared;
    const bool root = loader->is_root_device(device);
    {
        std::lock_guard g(root ? shared_mu : mu);
        auto& cache = root ? shared : identities;
        if (auto it = cache.find(device); it != cache.end()) {
            return it->second;
        }
    }
    auto id = loader->identify(device);
    if (!id) {
        return fail(id.error());
    }
    std::lock_guard g(root ? shared_mu : mu);
    (root ? shared : identities).emplace(device, *id);
    return *id;
}

// Binaries this process already loaded (see resident_bytes.hpp): the outcome
// names the tier that holds them (persisted_rung), with `resident` set. Only
// plans that may use stored bytes come here; verify_before_use reads the store.
std::optional<service::ProgramRef> Cache::Impl::try_resident(cl_context context,
                                                             cl_device_id device, const Plan& plan,
                                                             Outcome& out) {
    if (plan.verified_only) {
        return std::nullopt;
    }
    auto hit = resident.find(plan.key);
    if (!hit) {
        return std::nullopt;
    }
    auto prog = loader->load(context, device, *hit->bytes, plan.input.options);
    if (!prog) {
        resident.erase(plan.key);  // the store path below records the rejection
        return std::nullopt;
    }
    out.rung = hit->origin;
    out.resident = true;
    counters.resident++;
    return std::move(*prog);
}

// A stored exact binary (user store or pack) loaded by the driver; a binary
// the driver rejects is recorded, and dropped from the user store.
// Where good load-check verdicts are kept for the node: beside a writable
// user store (none without one).
std::filesystem::path Cache::Impl::vouched_dir() {
    return writable_user_store() != nullptr ? config.dir / "vouched" : std::filesystem::path();
}

std::optional<service::ProgramRef> Cache::Impl::load_stored(cl_context context, cl_device_id device,
                                                            const Plan& plan, store::TieredHit& hit,
                                                            Outcome& out) {
    if (hit.tier.kind == store::Tier::Kind::pack) {
        out.misses.emplace_back(Rung::user_store, MissCause::answered_below,
                                "missed (a pack had the entry)");
    }
    // Not compiled here (a pack's, an imported entry): checked in the helper first.
    auto prog = [&]() -> Result<cl::ProgramHandle, std::string> {
        if (service::built_elsewhere(hit.tier, hit.entry.info)) {
            if (auto bad = service::vouch_for_binary(
                    service::verify_helper_beside(config.jit_helper), vouched_dir(), plan.fields,
                    hit.entry.bytes, plan.input.options)) {
                return fail(std::move(*bad));
            }
        }
        return loader->load(context, device, hit.entry.bytes, plan.input.options);
    }();
    if (prog) {
        out.rung = rung_of(hit.tier);
        (out.rung == Rung::user_store ? counters.store : counters.pack)++;
        publish(plan, std::move(hit.entry.bytes), hit.entry.info.provenance, out.rung, Share::now,
                &out.misses);
        return std::move(*prog);
    }
    out.misses.emplace_back(rung_of(hit.tier), MissCause::rejected_by_driver,
                            "driver rejected the binary: " + prog.error());
    store_failure(plan, store::FailureKind::rejected_binary, prog.error(), 0, &out.misses);
    if (hit.tier.kind == store::Tier::Kind::user) {
        store_remove(plan, &out.misses);
    }
    return std::nullopt;
}

std::optional<service::ProgramRef> Cache::Impl::try_hot(cl_context context, cl_device_id device,
                                                        const Plan& plan, Outcome& out) {
    store::Store* user = tiers.user();
    if (plan.verified_only || user == nullptr) {
        return std::nullopt;
    }
    auto bytes = user->get_hot(plan.fields);
    if (!bytes) {
        return std::nullopt;
    }
    store::TieredHit hit{store::Entry{{}, std::move(*bytes)},
                         store::Tier{store::Tier::Kind::user, 0, "user"}};
    return load_stored(context, device, plan, hit, out);
}

std::optional<service::ProgramRef> Cache::Impl::try_stored(cl_context context, cl_device_id device,
                                                           Plan& plan, Outcome& out) {
    open_packs_once();
    auto hit = tiers.get(plan.fields);
    if (hit && plan.verified_only && hit->entry.info.verification != store::Verification::passed) {
        out.misses.emplace_back(rung_of(hit->tier), MissCause::not_verified,
                                "entry not verified on the device (quirk verify_before_use)");
    } else if (hit) {
        if (auto prog = load_stored(context, device, plan, *hit, out)) {
            return prog;
        }
    } else {
        for (const auto& [tier, miss] : hit.error().misses) {
            out.misses.emplace_back(rung_of(tier), cause_of(miss.reason), describe(miss));
        }
        if (auto got = try_remote(context, device, plan, out); got || plan.remote_error) {
            return got;
        }
    }
    if (!hit || hit->tier.kind == store::Tier::Kind::pack) {
        for (const service::RefusedPack& refused : refused_packs) {
            out.misses.emplace_back(Rung::pack, MissCause::skipped, service::describe(refused));
        }
    }
    return try_aot(context, device, plan, out);
}

std::optional<service::ProgramRef> Cache::Impl::try_aot(cl_context context, cl_device_id device,
                                                        const Plan& plan, Outcome& out) {
    if (!plan.aot_target) {
        out.misses.emplace_back(Rung::aot, MissCause::no_aot_target,
                                "no AOT target for this device");
        return std::nullopt;
    }
    open_packs_once();
    // A prebuild that could not target this device says so in its pack: JIT at once.
    if (auto cov = tiers.aot_coverage(*plan.aot_target);
        cov && cov->second.status != store::CoverageStatus::covered) {
        out.misses.emplace_back(
            Rung::aot, MissCause::target_not_covered,
            "pack " + cov->first.string() + " records target " + *plan.aot_target + " as " +
                store::to_string(cov->second.status) + ": " + cov->second.detail);
        return std::nullopt;
    }
    auto afields = service::aot_key_fields(*plan.aot_target, plan.input);
    auto aot = tiers.get(afields);
    if (!aot) {
        out.misses.emplace_back(Rung::aot, MissCause::not_found,
                                "no AOT binary for target " + *plan.aot_target);
        return std::nullopt;
    }
    // Built elsewhere (a prebuild's pack): loaded in the helper first.
    auto prog = [&]() -> Result<cl::ProgramHandle, std::string> {
        if (auto bad = service::vouch_for_binary(service::verify_helper_beside(config.jit_helper),
                                                 vouched_dir(), plan.fields, aot->entry.bytes,
                                                 plan.input.options)) {
            return fail(std::move(*bad));
        }
        return loader->load(context, device, aot->entry.bytes, plan.input.options);
    }();
    if (!prog) {
        out.misses.emplace_back(
            Rung::aot, MissCause::rejected_by_driver,
            "driver rejected the AOT binary for " + *plan.aot_target + ": " + prog.error());
        store_failure(plan, store::FailureKind::rejected_binary, prog.error(), 0, &out.misses);
        return std::nullopt;
    }
    store::Provenance prov = aot->entry.info.provenance;
    prov.origin = store::Origin::aot;
    out.rung = Rung::aot;
    counters.aot++;
    // Promoted to the exact key, shared, kept resident.
    publish(plan, std::move(aot->entry.bytes), prov, Rung::aot, Share::now, &out.misses);
    return std::move(*prog);
}

store::Store* Cache::Impl::writable_user_store() {
    store::Store* user = tiers.user();
    return user != nullptr && user->mode() == store::OpenMode::read_write ? user : nullptr;
}

// Rung 4: a fresh failure record answers with its status (a rejected binary
// does not: the JIT may still build one the driver takes). True when it answered.
bool Cache::Impl::answer_from_failure_record(const Plan& plan, Outcome& out) {
    store::Store* user = tiers.user();
    if (user != nullptr) {
        auto fr = user->find_fresh_failure(plan.key, plan.budget.count());
        if (fr && *fr && (*fr)->kind != store::FailureKind::rejected_binary) {
            const store::FailureRecord& rec = **fr;
            out.status = status_of(rec.kind);
            out.rung = Rung::failure_record;
            out.message = std::string("recorded ") + store::to_string(rec.kind) + " (seen " +
                          std::to_string(rec.count) + "x" +
                          (rec.kind == store::FailureKind::timeout && rec.budget_ms > 0
                               ? ", under a budget of " + std::to_string(rec.budget_ms) + " ms"
                               : "") +
                          "): " + rec.detail;
            counters.failure++;
            return true;
        }
    }
    out.misses.emplace_back(Rung::failure_record, MissCause::no_failure_record,
                            "no fresh failure record");
    return false;
}

// Rungs 5 and 6: a compile in a helper under the deadline (shared with other
// requests for the key), loaded by the driver; nullopt with `out` saying why
// when there is no program (fail_fast, background, timeout, build failure).
std::optional<service::ProgramRef> Cache::Impl::try_jit(cl_context context, cl_device_id device,
                                                        const Plan& plan, Outcome& out) {
    if (plan.mode == Mode::fail_fast) {
        out.status = StatusCode::not_cached;
        out.message = "not cached (fail_fast: no compile started)";
        return std::nullopt;
    }
    auto id = identity(device);
    if (!id) {
        out.status = StatusCode::device_error;
        out.message = id.error();
        return std::nullopt;
    }
    auto fut = start_compile(plan, *id);
    if (plan.mode == Mode::background) {
        out.status = StatusCode::not_ready;
        out.message = "compiling in the background; ask again later";
        return std::nullopt;
    }
    // The watchdog kills the helper at the deadline; the grace lets the
    // compile's own outcome (and its failure record) land first.
    if (fut.wait_until(plan.deadline + kWatchdogGrace) != std::future_status::ready) {
        out.status = StatusCode::timeout;
        out.rung = Rung::jit;
        out.message = "deadline passed while a shared compile was still running";
        return std::nullopt;
    }
    const Compiled& c = fut.get();
    out.compile = c.compile;
    out.rung = c.rung;
    out.misses.insert(out.misses.end(), c.misses.begin(), c.misses.end());
    if (c.status != StatusCode::ok) {
        out.status = c.status;
        out.message = c.message;
        return std::nullopt;
    }
    auto built = loader->load(context, device, c.bytes, plan.input.options);
    if (!built) {
        out.status = StatusCode::device_error;
        out.message = "the compiled binary did not load: " + built.error();
        return std::nullopt;
    }
    out.message = c.message;  // compile_now kept the bytes in `resident`
    return std::move(*built);
}

Program Cache::Impl::run_ladder(cl_context context, cl_device_id device, Plan& plan,
                                const std::string& signature, bool context_known) {
    Program p;
    Outcome& out = p.outcome_;
    out.key = plan.key.hex();
    if (cl_program kept =
            context_known ? programs.find(context, device, plan.key, signature) : nullptr) {
        p.program_ = kept;  // already the caller's own reference
        out.status = StatusCode::ok;
        out.rung = Rung::in_process;
        counters.in_process++;
        return p;
    }
    // (The message fits a short string: no allocation on a new context's load.)
    out.misses.emplace_back(Rung::in_process, MissCause::not_in_process, "not in process");
    std::optional<service::ProgramRef> prog;
    if (plan.use_stored) {
        prog = try_resident(context, device, plan, out);
        if (!prog) {
            prog = try_hot(context, device, plan, out);
        }
        if (!prog) {
            prog = try_stored(context, device, plan, out);
        }
        if (!prog && plan.remote_error) {
            out.status = StatusCode::store_error;
            out.message = *plan.remote_error;
            return p;
        }
    } else {
        out.misses.emplace_back(Rung::user_store, MissCause::skipped,
                                "skipped: quirk no_cached_binaries");
    }
    if (!prog) {
        if (answer_from_failure_record(plan, out)) {
            return p;
        }
        prog = try_jit(context, device, plan, out);
        if (!prog) {
            return p;  // `out` says why
        }
    }
    p.program_ =
        programs.insert(context, device, plan.platform, plan.key, std::move(*prog), signature);
    out.status = StatusCode::ok;
    return p;
}

}  // namespace kcache
