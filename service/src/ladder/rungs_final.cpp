// The ladder's last rungs: a fresh failure record answers at once, else a
// compile under the deadline, shared with every request for the key
// (flight.hpp), loaded by the driver.

#include "rungs.hpp"

namespace kcache::service {
namespace {

// The status callers see for a recorded failure.
StatusCode status_of(store::FailureKind kind) {
    using K = store::FailureKind;
    // A rejected binary's record never answers (see below).
    return kind == K::timeout       ? StatusCode::timeout
           : kind == K::crash       ? StatusCode::crashed
           : kind == K::build_error ? StatusCode::build_error
                                    : StatusCode::device_error;
}

Step fails(Outcome& out, StatusCode status, std::string message) {
    out.status = status;
    out.message = std::move(message);
    return Step::answered();
}

}  // namespace

// A rejected binary's record does not answer: the JIT may still build one
// the driver takes.
Step FailureRecordRung::attempt(Ask& ask) {
    const Plan& plan = ask.planned();
    Outcome& out = ask.out;
    if (store::Store* user = parts_.stored.user()) {
        auto fr = user->find_fresh_failure(plan.key, plan.budget.count());
        if (fr && *fr && (*fr)->kind != store::FailureKind::rejected_binary) {
            const store::FailureRecord& rec = **fr;
            out.rung = Rung::failure_record;
            parts_.counters.bump(Counter::failure_hits);
            return fails(out, status_of(rec.kind),
                         std::string("recorded ") + store::to_string(rec.kind) + " (seen " +
                             std::to_string(rec.count) + "x" +
                             (rec.kind == store::FailureKind::timeout && rec.budget_ms > 0
                                  ? ", under a budget of " + std::to_string(rec.budget_ms) + " ms"
                                  : "") +
                             "): " + rec.detail);
        }
    }
    out.misses.emplace_back(Rung::failure_record, MissCause::no_failure_record,
                            "no fresh failure record");
    return Step::miss();
}

// Answers with a program, or with `out` saying why there is none
// (fail_fast, background, timeout, build failure).
Step JitRung::attempt(Ask& ask) {
    const Plan& plan = ask.planned();
    Outcome& out = ask.out;
    if (plan.mode == Mode::fail_fast) {
        return fails(out, StatusCode::not_cached, "not cached (fail_fast: no compile started)");
    }
    auto id = parts_.identities.of(ask.device);
    if (!id) {
        return fails(out, StatusCode::device_error, id.error());
    }
    auto fut = parts_.flight.start(plan, **id);
    if (plan.mode == Mode::background) {
        return fails(out, StatusCode::not_ready, "compiling in the background; ask again later");
    }
    // The watchdog kills the helper at the deadline; the grace lets the
    // compile's own outcome (and its failure record) land first.
    if (fut.wait_until(plan.deadline + kWatchdogGrace) != std::future_status::ready) {
        out.rung = Rung::jit;
        return fails(out, StatusCode::timeout,
                     "deadline passed while a shared compile was still running");
    }
    const Compiled& c = fut.get();
    out.compile = c.compile;
    out.rung = c.rung;
    out.misses.insert(out.misses.end(), c.misses.begin(), c.misses.end());
    if (c.status != StatusCode::ok) {
        return fails(out, c.status, c.message);
    }
    auto built = load_checked(parts_, ask, c.bytes);
    if (!built) {
        return fails(out, StatusCode::device_error,
                     "the compiled binary did not load: " + built.error());
    }
    out.message = c.message;  // the compile kept the bytes resident
    return Step::loaded(std::move(*built));
}

}  // namespace kcache::service
