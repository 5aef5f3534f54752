// The lookup ladder, top to bottom. A request walks its steps in this order
// until one answers:
//
//   in-process   a program this Cache built for the context, by the
//                request's signature (rungs_memory.cpp)
//   plan         the request resolved: device facts, quirks, the variant
//                rendered, the key, the deadline (plan_stage.cpp)
//   canary gate  the driver canary's verdict on the variant (canary_gate.cpp)
//   errata gate  an erratum covering the variant on the driver (errata_gate.cpp)
//   by key       a program this Cache built for the context by the plan's key
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
#include "kcache/common/hot_path.hpp"

#include <tuple>
#include <utility>

#include "kcache/observe/trace.hpp"
#include "rungs.hpp"

namespace kcache::service {

// The ladder, top to bottom (each step is one class of rungs.hpp), with the
// parts its steps are made of, in one block of memory. A repeat hit ends at
// the first; a step that needs the plan comes after the plan stage.
struct Ladder::Rungs {
    using List =
        std::tuple<InProcessRung, PlanStage, CanaryGate, ErrataGate, KeptByKeyRung, ResidentRung,
                   StoredRung, RemoteRung, AotRung, IlRung, FailureRecordRung, JitRung>;
    explicit Rungs(const RungParts& p) : parts(p), list(made(parts)) {}

    // Every step of the list made of `parts`.
    static List made(const RungParts& parts) {
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return List((static_cast<void>(I), parts)...);
        }
        (std::make_index_sequence<std::tuple_size_v<List>>());
    }

    const RungParts parts;
    List list;
};

Ladder::Ladder(const RungParts& parts) : rungs_(std::make_unique<Rungs>(parts)) {}
Ladder::~Ladder() = default;

void Ladder::prefetch() const noexcept {
    prefetch_lines(rungs_.get(), sizeof(Rungs));
}

namespace {

// One attempt of `rung` (a span of the traced request, trace.hpp): true when
// it answered, with `answer` the caller's program reference or null (then
// `ask.out` says why). Called on the rung's own final class: no virtual call.
template <class Rung>
[[gnu::always_inline]] inline bool answered(Rung& rung, Ask& ask, ProgramCache& programs,
                                            cl_program& answer) {
    if (rung.needs_plan() && ask.plan() == nullptr) {
        return true;  // the request cannot be planned: `ask.out` says why
    }
    trace::Span span(rung.name(), rung.category());
    Step step = rung.attempt(ask);
    if (!step.done) {
        return false;
    }
    if (step.kept != nullptr) {
        ask.out.status = StatusCode::ok;
        answer = step.kept;
    } else if (step.program) {
        const Plan& plan = ask.planned();
        ask.out.status = StatusCode::ok;
        answer = programs.insert(ask.context, ask.device, plan.platform, plan.key,
                                 std::move(step.program), ask.signature);
    }  // else answered without a program: `ask.out` says why
    return true;
}

}  // namespace

KCACHE_HOT_PATH cl_program Ladder::walk(Ask& ask) {
    cl_program answer = nullptr;
    const bool done = std::apply(
        [&](auto&... rung) { return (answered(rung, ask, rungs_->parts.programs, answer) || ...); },
        rungs_->list);
    if (!done) {
        ask.out.status = StatusCode::internal_error;  // the JIT rung always answers
        ask.out.message = "no rung answered";
    }
    return answer;
}

}  // namespace kcache::service
