// The lookup ladder, top to bottom. A request walks the rungs in this order
// until one answers:
//
//   in-process   a program this Cache built for the context (rungs_memory.cpp)
//   resident     bytes this process already loaded, for a new context
//   stored       the exact binary: the user store's hot copy, its SQLite
//                entry, then packs (rungs_stored.cpp)
//   remote       the exact binary from the shared tier (remote_rung.cpp)
//   AOT          an ahead-of-time binary for the device's target (rungs_stored.cpp)
//   failure      a fresh failure record answers at once (rungs_final.cpp)
//   JIT          one compile per key under the watchdog (rungs_final.cpp, flight.cpp)
//
// A rung that produced bytes hands them to the publish step (publish.cpp);
// a program loaded below the in-process rung is kept there for the context.

#include "ladder.hpp"

#include "kcache/cache/trace.hpp"
#include "rungs.hpp"

namespace kcache::service {

Ladder::Ladder(const RungParts& parts) : programs_(parts.programs) {
    rungs_.push_back(std::make_unique<InProcessRung>("in_process", parts));
    rungs_.push_back(std::make_unique<ResidentRung>("resident", parts));
    rungs_.push_back(std::make_unique<StoredRung>("stored", parts));
    rungs_.push_back(std::make_unique<RemoteRung>("remote", parts));
    rungs_.push_back(std::make_unique<AotRung>("aot", parts));
    rungs_.push_back(std::make_unique<FailureRecordRung>("failure_record", parts));
    rungs_.push_back(std::make_unique<JitRung>("jit", parts));
}

[[gnu::hot]] cl_program Ladder::walk(Ask& ask) {
    for (const auto& rung : rungs_) {
        if (rung->needs_plan() && ask.plan() == nullptr) {
            return nullptr;  // the request cannot be planned: `ask.out` says why
        }
        // One attempt of one rung, a span of the traced request (trace.hpp).
        trace::Span span(rung->name(), "rung");
        Step step = rung->attempt(ask);
        if (!step.done) {
            continue;
        }
        if (step.kept != nullptr) {
            ask.out.status = StatusCode::ok;
            return step.kept;
        }
        if (!step.program) {
            return nullptr;  // answered without a program: `ask.out` says why
        }
        const Plan& plan = ask.planned();
        ask.out.status = StatusCode::ok;
        return programs_.insert(ask.context, ask.device, plan.platform, plan.key,
                                std::move(step.program), ask.signature);
    }
    ask.out.status = StatusCode::internal_error;  // the JIT rung always answers
    ask.out.message = "no rung answered";
    return nullptr;
}

}  // namespace kcache::service
