// The lookup ladder (docs/design.md, "The lookup ladder"): in-process programs,
// exact native binaries (user store, then packs), AOT binaries for the
// device's target, fresh failure records, then JIT under the deadline.
// Every rung that misses leaves its reason in the outcome.

#include "cache_impl.hpp"

namespace kcache {
namespace {

constexpr auto kWatchdogGrace = std::chrono::milliseconds(250);

Rung rung_of(const store::Tier& tier) {
    return tier.kind == store::Tier::Kind::user ? Rung::user_store : Rung::pack;
}

// The rung to report for bytes kept in memory: where a later process would
// find them (JIT results and promoted AOT binaries are in a writable user store).
Rung persisted_rung(store::TieredStore& tiers, Rung produced) {
    const store::Store* user = tiers.user();
    const bool writable = user != nullptr && user->mode() == store::OpenMode::read_write;
    return writable && (produced == Rung::jit || produced == Rung::aot) ? Rung::user_store
                                                                        : produced;
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
    cl_device_id parent = nullptr;
    const bool root = clGetDeviceInfo(device, CL_DEVICE_PARENT_DEVICE, sizeof(parent), &parent,
                                      nullptr) == CL_SUCCESS &&
                      parent == nullptr;
    {
        std::lock_guard g(root ? shared_mu : mu);
        auto& cache = root ? shared : identities;
        if (auto it = cache.find(device); it != cache.end()) {
            return it->second;
        }
    }
    auto id = device_db::probe(device);
    if (!id) {
        return fail("cannot identify the device: " + id.error().message);
    }
    std::lock_guard g(root ? shared_mu : mu);
    (root ? shared : identities).emplace(device, *id);
    return *id;
}

// Binaries this process already loaded (see resident_bytes.hpp): the outcome
// names the rung they first came from, with `resident` set. Only callers that
// may use stored bytes come here; verify_before_use keeps its own path.
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
    auto prog = service::program_from_binary(context, device, *hit->bytes, plan.input.options);
    if (!prog) {
        resident.erase(plan.key);  // the store path below records the rejection
        return std::nullopt;
    }
    out.rung = hit->origin;
    out.resident = true;
    counters.resident++;
    return std::move(*prog);
}

std::optional<service::ProgramRef> Cache::Impl::try_stored(cl_context context, cl_device_id device,
                                                           Plan& plan, Outcome& out) {
    store::Store* user = tiers.user();
    auto hit = tiers.get(plan.fields);
    if (hit && plan.verified_only && hit->entry.info.verification != store::Verification::passed) {
        out.misses.emplace_back(rung_of(hit->tier),
                                "entry not verified on the device (quirk verify_before_use)");
    } else if (hit) {
        if (hit->tier.kind == store::Tier::Kind::pack) {
            out.misses.emplace_back(Rung::user_store, "missed (a pack had the entry)");
        }
        auto prog =
            service::program_from_binary(context, device, hit->entry.bytes, plan.input.options);
        if (prog) {
            out.rung = rung_of(hit->tier);
            (out.rung == Rung::user_store ? counters.store : counters.pack)++;
            if (!plan.verified_only) {
                resident.put(plan.key, std::move(hit->entry.bytes), out.rung);
            }
            return std::move(*prog);
        }
        out.misses.emplace_back(rung_of(hit->tier), "driver rejected the binary: " + prog.error());
        if (user != nullptr && user->mode() == store::OpenMode::read_write) {
            (void)user->record_failure(plan.key, store::FailureKind::rejected_binary, prog.error());
            if (hit->tier.kind == store::Tier::Kind::user) {
                (void)user->remove(plan.key);
            }
        }
    } else {
        for (const auto& [tier, miss] : hit.error().misses) {
            out.misses.emplace_back(rung_of(tier), describe(miss));
        }
    }
    if (!plan.aot_target) {
        out.misses.emplace_back(Rung::aot, "no AOT target for this device");
        return std::nullopt;
    }
    // A prebuild that could not target this device says so in its pack: JIT at once.
    if (auto cov = tiers.aot_coverage(*plan.aot_target);
        cov && cov->second.status != store::CoverageStatus::covered) {
        out.misses.emplace_back(Rung::aot, "pack " + cov->first.string() + " records target " +
                                               *plan.aot_target + " as " +
                                               store::to_string(cov->second.status) + ": " +
                                               cov->second.detail);
        return std::nullopt;
    }
    auto afields = service::aot_key_fields(*plan.aot_target, plan.input);
    auto aot = tiers.get(afields);
    if (!aot) {
        out.misses.emplace_back(Rung::aot, "no AOT binary for target " + *plan.aot_target);
        return std::nullopt;
    }
    auto prog = service::program_from_binary(context, device, aot->entry.bytes, plan.input.options);
    if (!prog) {
        out.misses.emplace_back(Rung::aot, "driver rejected the AOT binary for " +
                                               *plan.aot_target + ": " + prog.error());
        if (user != nullptr && user->mode() == store::OpenMode::read_write) {
            (void)user->record_failure(plan.key, store::FailureKind::rejected_binary, prog.error());
        }
        return std::nullopt;
    }
    if (user != nullptr && user->mode() == store::OpenMode::read_write) {
        store::Provenance prov = aot->entry.info.provenance;
        prov.origin = store::Origin::aot;
        (void)user->put(plan.fields, aot->entry.bytes, prov);  // promote to the exact key
    }
    out.rung = Rung::aot;
    counters.aot++;
    if (!plan.verified_only) {
        resident.put(plan.key, std::move(aot->entry.bytes), persisted_rung(tiers, Rung::aot));
    }
    return std::move(*prog);
}

Program Cache::Impl::run_ladder(cl_context context, cl_device_id device, Plan& plan) {
    Program p;
    Outcome& out = p.outcome_;
    out.key = plan.key.hex();
    if (cl_program kept = programs.find(context, device, plan.key)) {
        p.program_ = kept;  // already the caller's own reference
        out.status = StatusCode::ok;
        out.rung = Rung::in_process;
        counters.in_process++;
        return p;
    }
    out.misses.emplace_back(Rung::in_process, "not built in this process for this context");
    std::optional<service::ProgramRef> prog;
    if (plan.use_stored) {
        prog = try_resident(context, device, plan, out);
        if (!prog) {
            prog = try_stored(context, device, plan, out);
        }
    } else {
        out.misses.emplace_back(Rung::user_store, "skipped: quirk no_cached_binaries");
    }
    if (!prog) {
        store::Store* user = tiers.user();
        auto fr = user ? user->find_fresh_failure(plan.key)
                       : Result<std::optional<store::FailureRecord>, store::StoreError>(
                             std::optional<store::FailureRecord>{});
        if (fr && *fr && (*fr)->kind != store::FailureKind::rejected_binary) {
            const auto& rec = **fr;
            out.status = status_of(rec.kind);
            out.rung = Rung::failure_record;
            out.message = std::string("recorded ") + store::to_string(rec.kind) + " (seen " +
                          std::to_string(rec.count) + "x): " + rec.detail;
            counters.failure++;
            return p;
        }
        out.misses.emplace_back(Rung::failure_record, "no fresh failure record");
        if (plan.mode == Mode::fail_fast) {
            out.status = StatusCode::not_cached;
            out.message = "not cached (fail_fast: no compile started)";
            return p;
        }
        auto id = identity(device);
        if (!id) {
            out.status = StatusCode::device_error;
            out.message = id.error();
            return p;
        }
        auto fut = start_compile(plan, *id);
        if (plan.mode == Mode::background) {
            out.status = StatusCode::not_ready;
            out.message = "compiling in the background; ask again later";
            return p;
        }
        // The watchdog kills the helper at the deadline; the grace lets the
        // compile's own outcome (and its failure record) land first.
        if (fut.wait_until(plan.deadline + kWatchdogGrace) != std::future_status::ready) {
            out.status = StatusCode::timeout;
            out.rung = Rung::jit;
            out.message = "deadline passed while a shared compile was still running";
            return p;
        }
        const Compiled& c = fut.get();
        out.compile = c.compile;
        out.rung = c.rung;
        if (c.status != StatusCode::ok) {
            out.status = c.status;
            out.message = c.message;
            return p;
        }
        auto built = service::program_from_binary(context, device, c.bytes, plan.input.options);
        if (!built) {
            out.status = StatusCode::device_error;
            out.message = "the compiled binary did not load: " + built.error();
            return p;
        }
        prog = std::move(*built);
        out.message = c.message;
        if (plan.use_stored && !plan.verified_only) {
            resident.put(plan.key, c.bytes, persisted_rung(tiers, c.rung));
        }
    }
    p.program_ = programs.insert(context, device, plan.key, std::move(*prog));
    out.status = StatusCode::ok;
    return p;
}

}  // namespace kcache
