// The ladder's rungs in memory: the in-process rung and its lookup by key
// (programs this Cache built, per context, over ProgramCache) and resident
// bytes (binaries this process already loaded, over ResidentBytes).

#include "kcache/common/hot_path.hpp"
#include "rungs.hpp"

namespace kcache::service {
namespace {

Step found(Ask& ask, Counters& counters, cl_program kept) {
    ask.out.rung = Rung::in_process;
    counters.bump(Counter::in_process_hits);
    return Step::found(kept);
}

}  // namespace

KCACHE_HOT_PATH Step InProcessRung::attempt(Ask& ask) {
    auto hit = parts_.programs.find_signature(ask.context, ask.device, ask.signature);
    if (hit.program != nullptr) {
        ask.out.key = hit.key.hex();
        return found(ask, parts_.counters, hit.program);
    }
    ask.context_known = hit.context_known;
    if (!hit.context_known) {
        // (The message fits a short string: no allocation on a new context's load.)
        ask.out.misses.emplace_back(Rung::in_process, MissCause::not_in_process, "not in process");
    }
    return Step::miss();
}

KCACHE_HOT_PATH Step KeptByKeyRung::attempt(Ask& ask) {
    if (!ask.context_known) {
        return Step::miss();  // the in-process rung told the miss
    }
    if (cl_program kept =
            parts_.programs.find(ask.context, ask.device, ask.planned().key, ask.signature)) {
        return found(ask, parts_.counters, kept);
    }
    ask.out.misses.emplace_back(Rung::in_process, MissCause::not_in_process, "not in process");
    return Step::miss();
}

// The outcome names the tier that holds the bytes, with `resident` set. Not
// for verify_before_use, which reads the store; a miss here is not one to tell.
KCACHE_HOT_PATH Step ResidentRung::attempt(Ask& ask) {
    const Plan& plan = ask.planned();
    if (!plan.use_stored || plan.verified_only) {
        return Step::miss();
    }
    auto hit = parts_.resident.find(plan.key);
    if (!hit) {
        return Step::miss();
    }
    auto prog = load_checked(parts_, ask, *hit->bytes);
    if (!prog) {
        parts_.resident.erase(plan.key);  // the stored rung records the rejection
        return Step::miss();
    }
    ask.out.rung = hit->origin;
    ask.out.resident = true;
    parts_.counters.bump(Counter::resident_hits);
    return Step::loaded(std::move(*prog));
}

}  // namespace kcache::service
