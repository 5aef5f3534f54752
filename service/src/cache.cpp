// The Cache facade: opening (the composition root's parts, wired into
// Cache::Impl) and a request's way from the public call to the ladder:
// the checks on the handles and the deadline, then the walk (ladder.cpp),
// whose rungs below the in-process one ask for the plan made here (the
// device's identity and quirks, the variant rendered, the key). Nothing
// here throws outward.

#include "cache_impl.hpp"
#include "canary_gate.hpp"
#include "canary_kat.hpp"
#include "kcache/common/deadline.hpp"
#include "kcache/common/fork.hpp"
#include "kcache/common/hot_path.hpp"
#include "kcache/common/serial_calls.hpp"
#include "kcache/kernels/registry.hpp"
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
      publisher(stored, resident, remote.get(), workers, counters),
      flight(config, stored, publisher, workers, counters),
      ladder(service::RungParts{config, *loader, programs, resident, stored, remote.get(),
                                publisher, flight, identities, counters}) {}

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

using service::Plan;

// Checks the context and applies the device's facts (its identity and
// quirks, made once per root device: Identities::facts_of); fills
// everything of `plan` but the compile input and the deadline. Returns ok
// or why not.
Outcome prepare(Cache::Impl& impl, cl_context context, cl_device_id device, Plan& plan,
                service::FactsRef& facts) {
    std::string why;
    if (!impl.loader->device_in_context(context, device, why)) {
        return failed(StatusCode::invalid_argument, why);
    }
    auto found = impl.identities.facts_of(device, impl.db);
    if (!found) {
        return failed(StatusCode::device_error, found.error());
    }
    facts = std::move(*found);
    const device_db::QuirkDecision& quirks = facts->quirks;
    if (quirks.deny) {
        return failed(
            StatusCode::unsupported,
            "device denied by quirk rule " + (quirks.rules.empty() ? "" : quirks.rules[0]->id));
    }
    if (quirks.jit_timeout_ms) {
        plan.budget_cap = std::chrono::milliseconds(*quirks.jit_timeout_ms);
    }
    plan.use_stored = !quirks.no_cached_binaries;
    plan.verified_only = quirks.verify_before_use;
    if (quirks.serialize_loads) {
        serial_calls::turn_on();  // this process's loads and releases, one at a time
    }
    plan.aot_target = facts->aot_target;
    plan.platform = facts->platform;  // null: the in-process rung asks again
    plan.root_device = facts->root;
    return failed(StatusCode::ok, "");
}

// The key: the device's half of the fields (made once) and the input's;
// the key record serialized once, for the key and the hot copy's read.
void finish(Plan& plan, const service::DeviceFacts& facts) {
    plan.fields = facts.jit_fields;
    device_db::set_input_fields(plan.fields, plan.input);
    plan.key_record = store::serialize_key_fields(plan.fields);
    plan.key = store::Key{sha256(plan.key_record)};
}

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
// walk down the ladder. The plan is made when a rung first needs it: one
// memoized for this device and request (a new context: its handle is still
// checked), else `resolve(plan)` (prepare, render, key; returns ok or why
// not); then the request's deadline (its budget from `started`, when the
// request began) and mode. Returns the caller's program
// reference, or null with `out` saying why.
template <class Request, class Resolve>
KCACHE_HOT_PATH cl_program answer(Cache::Impl& impl, cl_context context, cl_device_id device,
                                  const Request& request, SteadyClock::time_point started,
                                  Outcome& out, Resolve&& resolve) {
    if (context == nullptr || device == nullptr) {
        out = failed(StatusCode::invalid_argument, "null cl_context or cl_device_id");
        return nullptr;
    }
    if (impl.config.disabled) {
        out = failed(StatusCode::disabled, "kcache is disabled (KCACHE_DISABLE)");
        return nullptr;
    }
    const auto budget = request.deadline.value_or(impl.config.jit_timeout);
    if (budget.count() < 0) {
        out = failed(StatusCode::invalid_argument, "negative deadline");
        return nullptr;
    }
    // The signature finds kept programs and plans; a cache that keeps none
    // (max_programs 0, as the OpenCL layer's) does not make it.
    const std::string signature =
        impl.config.max_programs == 0 ? std::string() : service::request_signature(request);
    std::unique_ptr<Plan> owned;
    bool memoized = false;
    auto make_plan = [&](service::Ask& ask) -> Plan* {
        owned = impl.plans.take(device, signature);
        memoized = owned != nullptr;
        std::string why;
        if (memoized && !impl.loader->device_in_context(context, device, why)) {
            ask.out = failed(StatusCode::invalid_argument, why);  // the plan goes back
            return nullptr;
        }
        if (!memoized) {
            trace::Span span("plan", "plan");  // the gates are spans inside it
            owned = std::make_unique<Plan>();
            if (Outcome ok = resolve(*owned); ok.status != StatusCode::ok) {
                owned.reset();
                ask.out = std::move(ok);
                return nullptr;
            }
        }
        Plan& plan = *owned;
        plan.budget = plan.budget_cap ? std::min(budget, *plan.budget_cap) : budget;
        plan.deadline = deadline_after<SteadyClock>(started, plan.budget);  // no clock read
        plan.mode = request.mode;
        ask.out.key = plan.key.hex();
        return &plan;
    };
    service::Ask ask(context, device, signature, out, make_plan);
    cl_program program = impl.ladder.walk(ask);
    if (owned) {
        const bool root = memoized || owned->root_device;
        impl.plans.keep(device, signature, std::move(owned), root);
    }
    return program;
}

// A program answered for a request goes out only as its known-answer test's
// verdict allows (canary_kat.hpp); otherwise it is released and `out` says
// why. A registry kernel's canary gates its plan instead (canary_gate.hpp).
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
template <class Request, class Resolve>
KCACHE_HOT_PATH void serve(Cache::Impl& impl, cl_context context, cl_device_id device,
                           const Request& request, cl_program& program, Outcome& out,
                           Resolve&& resolve) noexcept {
    prefetch_hot_path();  // a new context's hit finds all of it cold
    prefetch_lines(&impl, sizeof impl);
    impl.programs.prefetch();
    impl.ladder.prefetch();
    trace::Request traced;
    const auto took = guarded(out, [&](SteadyClock::time_point started) {
        program = answer(impl, context, device, request, started, out, resolve);
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
    serve(*impl, context, device, request, p.program_, p.outcome_, [&](Plan& plan) -> Outcome {
        kernels::Params params(request.params.begin(), request.params.end());
        auto variant = kernels::make_variant(request.kernel, params);
        if (!variant) {
            auto code = variant.error().code == kernels::KernelErrc::unknown_kernel
                            ? StatusCode::unknown_kernel
                            : StatusCode::invalid_argument;
            return failed(code, variant.error().message);
        }
        service::FactsRef facts;
        auto ok = prepare(*impl, context, device, plan, facts);
        if (ok.status != StatusCode::ok) {
            return ok;
        }
        const device_db::DeviceIdentity& id = *facts->id;
        if (auto sup = kernels::check_support(*variant, id.extensions); !sup) {
            return failed(StatusCode::unsupported, sup.error().message);
        }
        auto rendered = kernels::render(*variant);
        if (!rendered) {
            return failed(StatusCode::invalid_argument, rendered.error().message);
        }
        plan.input = {variant->id(), rendered->source, rendered->options, rendered->entry_points};
        plan.warmup_local_size = rendered->local_size;
        finish(plan, *facts);
        return service::canary_gate(impl->config, id, *variant, {&impl->stored, impl->remote.get()},
                                    &impl->workers);
    });
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
    serve(*impl, context, device, request, p.program_, p.outcome_, [&](Plan& plan) -> Outcome {
        if (request.source.empty()) {
            return failed(StatusCode::invalid_argument, "empty kernel source");
        }
        service::FactsRef facts;
        auto ok = prepare(*impl, context, device, plan, facts);
        if (ok.status != StatusCode::ok) {
            return ok;
        }
        plan.input = {request.name, request.source, request.options, request.entry_points};
        plan.input.link = request.link;
        plan.warmup_local_size = request.warmup_local_size;
        plan.aot_target.reset();  // AOT packs hold registry kernels only
        finish(plan, *facts);
        return ok;
    });
    return p;
}

}  // namespace kcache
