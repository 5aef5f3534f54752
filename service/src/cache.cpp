// The Cache facade: opening (the composition root's parts, wired into
// Cache::Impl) and a request's way from the public call to the ladder:
// the checks on the handles and the deadline, then the walk (ladder.cpp),
// whose plan stage resolves the request (plan_stage.cpp), and the memo of
// the plan it made. Nothing here throws outward.

#include "cache_impl.hpp"

#include <type_traits>

#include "canary_kat.hpp"
#include "kcache/common/fork.hpp"
#include "kcache/common/hot_path.hpp"
#include "kcache/common/serial_calls.hpp"
#include "kcache/service/parts.hpp"
#include "observe.hpp"

namespace kcache {
namespace {

Outcome failed(StatusCode s, std::string message) {
    Outcome o;
    o.status = s;
    o.message = std::move(message);
    return o;
}

// A forked child's answer when it could not open parts of its own.
Outcome not_reopened() {
    return failed(StatusCode::disabled,
                  "this forked process could not open its cache (see the warning): build it "
                  "yourself");
}

}  // namespace

Program::Program(Program&& o) noexcept
    : program_(std::exchange(o.program_, nullptr)), outcome_(std::move(o.outcome_)) {}
Program& Program::operator=(Program&& o) noexcept {
    if (this != &o) {
        if (program_ != nullptr) {
            auto one_at_a_time = serial_calls::hold();
            clReleaseProgram(program_);
        }
        program_ = std::exchange(o.program_, nullptr);
        outcome_ = std::move(o.outcome_);
    }
    return *this;
}
Program::~Program() {
    if (program_ != nullptr) {
        auto one_at_a_time = serial_calls::hold();
        clReleaseProgram(program_);
    }
}
cl_program Program::release() noexcept {
    return std::exchange(program_, nullptr);
}

Cache::Impl::Impl(Config c, service::Parts parts)
    : config(std::move(c)),
      made_in(fork_safety::generation()),
      loader(std::move(parts.loader)),
      db(std::move(parts.devices)),
      stored(config, std::move(parts.tiers)),
      remote(std::move(parts.remote)),
      identities(*loader),
      plans(config.max_programs, *loader),
      // A hit from a hot copy needs no SQLite, and the first one starts the
      // releaser's thread: that thread starts SQLite's open, not the caller.
      programs(config.max_programs, *loader, [this] { stored.open_user_in_background(); }),
      resident(config.max_resident_bytes),
      workers(std::move(parts.workers)),
      publisher(stored, resident, remote.get(), *workers, counters),
      flight(config, stored, publisher, *workers, counters),
      ladder(service::RungParts{config, *loader, programs, resident, stored, remote.get(),
                                publisher, flight, identities, counters, *db, plans, *workers}) {
    // The head start's thread, once the device data is built, also starts
    // the releaser's thread, which the first load would start otherwise
    // (55-75 µs on its path). No head start running: the load starts it.
    std::function<void()> early = [this] { programs.start_releaser_early(); };
    (void)workers->queue(early);
}

Cache::Impl::~Impl() {
    flight.close();
}

Cache::Cache(std::unique_ptr<Impl> impl) : impl_(impl.release()) {}
const Config& Cache::config() const noexcept {
    return impl_.load(std::memory_order_acquire)->config;  // the same in parent and child
}

KCACHE_HOT_PATH Cache::Impl* Cache::live() noexcept {
    Impl* impl = impl_.load(std::memory_order_acquire);
    if (impl->made_in == fork_safety::generation()) [[likely]] {
        return impl;
    }
    return reopen_in_child();
}

std::unique_ptr<Cache> Cache::open(const Config& config, Outcome* outcome) noexcept {
    Outcome local;
    Outcome& out = outcome ? *outcome : local;
    try {
        auto parts = service::open_parts(config);
        if (!parts) {
            out = failed(parts.error().status, parts.error().message);
            return nullptr;
        }
        auto impl = std::make_unique<Impl>(config, std::move(*parts));
        service::start_observing(config);  // the trace, the metrics file
        out = failed(StatusCode::ok, "");
        return std::unique_ptr<Cache>(new Cache(std::move(impl)));
    } catch (const std::exception& e) {
        out = failed(StatusCode::internal_error, e.what());
        return nullptr;
    } catch (...) {
        out = failed(StatusCode::internal_error, "unexpected exception while opening the cache");
        return nullptr;
    }
}

std::unique_ptr<Cache> Cache::open_default(Outcome* outcome) noexcept {
    try {
        Config c;
        std::string error;
        if (!load_config(c, error)) {
            if (outcome) {
                *outcome = failed(StatusCode::config_error, error);
            }
            return nullptr;
        }
        return open(c, outcome);
    } catch (const std::exception& e) {
        if (outcome) {
            *outcome = failed(StatusCode::internal_error, e.what());
        }
    } catch (...) {
        if (outcome) {
            *outcome = failed(StatusCode::internal_error, "unexpected exception");
        }
    }
    return nullptr;
}

namespace {

// Runs `body(start)` (which fills the program's outcome; `start`: when the
// request began), timing it; an exception becomes an internal_error
// outcome. Returns the time it took.
template <class F>
std::chrono::nanoseconds guarded(Outcome& out, F&& body) noexcept {
    const auto start = service::SteadyClock::now();
    try {
        body(start);
    } catch (const std::exception& e) {
        out = failed(StatusCode::internal_error, e.what());
    } catch (...) {
        out = failed(StatusCode::internal_error, "unexpected exception");
    }
    const auto took = service::SteadyClock::now() - start;
    out.total = std::chrono::duration_cast<std::chrono::microseconds>(took);
    return took;
}

// After an answer: the metrics and the trace (observe.hpp).
template <class Request>
void observed(Cache::Impl& impl, cl_device_id device, const Request& request,
              std::chrono::nanoseconds took, trace::Request& traced, const Outcome& out) noexcept {
    service::observe_answer(impl.config, request, took, traced, out, [&] {
        auto id = impl.identities.of(device);
        return id ? (*id)->name : std::string();
    });
}

// Every request's way: the checks on the handles and the deadline, then the
// walk down the ladder, whose plan stage plans the request (`wanted`: the
// request, its budget from `started`, when it began, and its mode); the plan
// it made or took from the memo is kept for a new context. Returns the
// caller's program reference, or null with `out` saying why.
template <class Request>
KCACHE_HOT_PATH cl_program answer(Cache::Impl& impl, cl_context context, cl_device_id device,
                                  const Request& request, SteadyClock::time_point started,
                                  Outcome& out) {
    if (context == nullptr || device == nullptr) {
        out = failed(StatusCode::invalid_argument, "null cl_context or cl_device_id");
        return nullptr;
    }
    if (impl.config.disabled) {
        out = failed(StatusCode::disabled, "kcache is disabled (KCACHE_DISABLE)");
        return nullptr;
    }
    service::Wanted wanted;
    wanted.budget = request.deadline.value_or(impl.config.jit_timeout);
    if (wanted.budget.count() < 0) {
        out = failed(StatusCode::invalid_argument, "negative deadline");
        return nullptr;
    }
    if constexpr (std::is_same_v<Request, KernelRequest>) {
        wanted.kernel = &request;
    } else {
        wanted.source = &request;
    }
    wanted.started = started;
    wanted.mode = request.mode;
    // The signature finds kept programs and plans; a cache that keeps none
    // (max_programs 0, as the OpenCL layer's) does not make it.
    const std::string signature =
        impl.config.max_programs == 0 ? std::string() : service::request_signature(request);
    service::Ask ask(context, device, signature, out, wanted);
    cl_program program = impl.ladder.walk(ask);
    const bool memoized = ask.plan() != nullptr && !ask.fresh();
    if (std::unique_ptr<service::Plan> plan = ask.take_plan()) {
        const bool root = memoized || plan->root_device;
        impl.plans.keep(device, signature, std::move(plan), root);
    }
    return program;
}

// A program answered for a request goes out only as its known-answer test's
// verdict allows (canary_kat.hpp); otherwise it is released and `out` says
// why. A registry kernel's plan is gated by the canary instead (the
// ladder's canary and errata gates: canary_gate.hpp).
void check_served(Cache::Impl&, cl_device_id, const KernelRequest&, cl_program&, Outcome&) {}
void check_served(Cache::Impl& impl, cl_device_id device, const SourceRequest& request,
                  cl_program& program, Outcome& out) {
    if (request.kat.empty() && !request.kat_reference) {
        return;
    }
    const service::KatServed served{out.key, device, program, impl.identities, *impl.loader};
    Outcome verdict = service::caller_kat_gate(impl.config, request, served);
    if (verdict.status != StatusCode::ok) {
        auto one_at_a_time = serial_calls::hold();
        clReleaseProgram(std::exchange(program, nullptr));
        out.status = verdict.status;
        out.message = std::move(verdict.message);
    }
}

// A public request from start to end: answer() under guarded() (timed; an
// exception becomes the outcome), check_served(), then observed(). Fills
// `program` (the caller's reference, or null) and `out`.
template <class Request>
KCACHE_HOT_PATH void serve(Cache::Impl& impl, cl_context context, cl_device_id device,
                           const Request& request, cl_program& program, Outcome& out) noexcept {
    prefetch_hot_path();  // a new context's hit finds all of it cold
    prefetch_lines(&impl, sizeof impl);
    impl.programs.prefetch();
    impl.ladder.prefetch();
    trace::Request traced;
    const auto took = guarded(out, [&](SteadyClock::time_point started) {
        program = answer(impl, context, device, request, started, out);
        if (program != nullptr) {
            check_served(impl, device, request, program, out);
        }
    });
    observed(impl, device, request, took, traced, out);
}

}  // namespace

KCACHE_HOT_PATH Program Cache::program(cl_context context, cl_device_id device,
                                       const KernelRequest& request) noexcept {
    Program p;
    Impl* impl = live();
    if (impl == nullptr) [[unlikely]] {
        p.outcome_ = not_reopened();
        return p;
    }
    serve(*impl, context, device, request, p.program_, p.outcome_);
    return p;
}

KCACHE_HOT_PATH Program Cache::program(cl_context context, cl_device_id device,
                                       const SourceRequest& request) noexcept {
    Program p;
    Impl* impl = live();
    if (impl == nullptr) [[unlikely]] {
        p.outcome_ = not_reopened();
        return p;
    }
    serve(*impl, context, device, request, p.program_, p.outcome_);
    return p;
}

}  // namespace kcache
