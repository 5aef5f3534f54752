// The ladder's IL rung (docs/design.md, "The SPIR-V tier"): for a device
// that loads IL and had no native binary above, a SPIR-V entry of the
// request's input from the user store or a pack is built into the device's
// native binary in a kcache-jit helper under the watchdog (one build per
// key, flight.hpp), stored under the exact key for the next process and
// loaded. A module the device cannot take (an extension it lacks, or the
// driver refusing it) is a recorded miss; the compile from source follows.

#include "rungs.hpp"

namespace kcache::service {
namespace {

constexpr const char* kRejectedPrefix = "SPIR-V ";  // what flight.cpp records

std::string describe(const IlTarget& t) {
    std::string s = "SPIR-V " + t.spirv_version + " for ";
    for (std::size_t i = 0; i < t.extensions.size(); ++i) {
        s += (i ? ", " : "") + t.extensions[i];
    }
    return t.extensions.empty() ? s + "no OpenCL C extensions" : s;
}

std::string joined(const std::vector<std::string>& names) {
    std::string s;
    for (const std::string& n : names) {
        s += (s.empty() ? "" : ", ") + n;
    }
    return s;
}

// The kind of a fresh failure record that stops this rung: this key's
// module refused before, or the key's compile failing (a timeout or crash
// would recur; the failure-record rung answers with it). An AOT binary's
// refusal does not stop it.
std::optional<store::FailureKind> stopping_record(const RungParts& parts, const Plan& plan) {
    store::Store* user = parts.stored.user();
    auto fr = user ? user->find_fresh_failure(plan.key, plan.budget.count())
                   : Result<std::optional<store::FailureRecord>, store::StoreError>(std::nullopt);
    if (!fr || !*fr) {
        return std::nullopt;
    }
    const store::FailureRecord& rec = **fr;
    if (rec.kind == store::FailureKind::rejected_binary &&
        rec.detail.rfind(kRejectedPrefix, 0) != 0) {
        return std::nullopt;
    }
    return rec.kind;
}

// The stored module for `plan` on `id`, or nullopt after noting why not.
std::optional<store::Bytes> find_module(const RungParts& parts, Ask& ask,
                                        const device_db::DeviceIdentity& id) {
    const Plan& plan = ask.planned();
    const IlTarget target = il_target(plan.input);
    if (auto missing = missing_extensions(target, id); !missing.empty()) {
        ask.out.misses.emplace_back(Rung::jit, MissCause::skipped,
                                    "SPIR-V: the module is compiled for " + describe(target) +
                                        "; the device lacks " + joined(missing));
        return std::nullopt;
    }
    auto hit = parts.stored.with_packs().get(il_key_fields(target, plan.input));
    if (!hit) {
        ask.out.misses.emplace_back(Rung::jit, MissCause::not_found,
                                    "SPIR-V: no entry of " + describe(target));
        return std::nullopt;
    }
    if (auto kind = stopping_record(parts, plan)) {
        ask.out.misses.emplace_back(Rung::jit, MissCause::rejected_by_driver,
                                    std::string("SPIR-V: not built, a fresh failure record (") +
                                        store::to_string(*kind) + ") holds the key");
        return std::nullopt;
    }
    return std::move(hit->entry.bytes);
}

}  // namespace

Step IlRung::attempt(Ask& ask) {
    const Plan& plan = ask.planned();
    Outcome& out = ask.out;
    if (!plan.use_stored || plan.mode == Mode::fail_fast) {
        return Step::miss();  // the stored rung told why; fail_fast starts no build
    }
    auto id = parts_.identities.of(ask.device);
    if (!id || !accepts_il(**id)) {
        return Step::miss();  // a device without IL: nothing to say
    }
    auto module = find_module(parts_, ask, **id);
    if (!module) {
        return Step::miss();
    }
    auto fut = parts_.flight.start_il(plan, **id, std::string(module->begin(), module->end()));
    if (plan.mode == Mode::background) {
        out.status = StatusCode::not_ready;
        out.message = "building a stored SPIR-V module in the background; ask again later";
        return Step::answered();
    }
    if (fut.wait_until(plan.deadline + kWatchdogGrace) != std::future_status::ready) {
        out.rung = Rung::jit;
        out.status = StatusCode::timeout;
        out.message = "deadline passed while the SPIR-V module was being built";
        return Step::answered();
    }
    const Compiled& c = fut.get();
    out.misses.insert(out.misses.end(), c.misses.begin(), c.misses.end());
    if (c.status != StatusCode::ok) {
        out.misses.emplace_back(Rung::jit, MissCause::rejected_by_driver,
                                "SPIR-V: the driver refused the module: " + c.message);
        return Step::miss();
    }
    auto built = load_checked(parts_, ask, c.bytes);
    if (!built) {
        out.misses.emplace_back(Rung::jit, MissCause::rejected_by_driver,
                                "SPIR-V: the built binary did not load: " + built.error());
        return Step::miss();
    }
    out.compile = c.compile;
    out.rung = c.rung;
    out.message = c.message;
    return Step::loaded(std::move(*built));
}

}  // namespace kcache::service
