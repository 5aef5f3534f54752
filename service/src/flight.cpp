// Single-flight JIT (flight.hpp): one compile per key at a time, in a
// kcache-jit helper under the watchdog.

#include "flight.hpp"

#include <signal.h>

#include <memory>

#include "kcache/common/hex.hpp"
#include "kcache/common/key_lock.hpp"
#include "observe.hpp"

namespace kcache::service {
namespace {

thread_local pid_t t_helper = -1;  // the helper this thread is waiting for

struct FailureMapping {
    StatusCode status;
    std::optional<store::FailureKind> record;
};

FailureMapping map_failure(compiler::JitErrc kind) {
    using K = compiler::JitErrc;
    switch (kind) {
        case K::timeout:
            return {StatusCode::timeout, store::FailureKind::timeout};
        case K::crash:
            return {StatusCode::crashed, store::FailureKind::crash};
        case K::build_error:
            return {StatusCode::build_error, store::FailureKind::build_error};
        case K::device_not_found:
        case K::driver_error:
        case K::invalid_binary:
            return {StatusCode::device_error, std::nullopt};
        case K::protocol:
        case K::spawn_failed:
            break;
    }
    return {StatusCode::internal_error, std::nullopt};
}

Compiled compile_error(StatusCode s, std::string message) {
    Compiled c;
    c.status = s;
    c.message = std::move(message);
    return c;
}

// Between a compile's answer and its later warm-up (JitRequest::
// warm_after_reply): the warmed binary replaces the stored one only after
// compile_now() has stored the first, whatever way it returns.
struct WarmGate {
    std::promise<void> opened;
    std::shared_future<void> open = opened.get_future().share();
    store::Provenance provenance;  // the compile's, for the warmed entry
    // The answer's binary, shared with the remote tier only if no warmed one
    // comes (so that each compile uploads once, the best binary it has).
    bool share_answer = false;
    store::Bytes answer;
};

struct OpenOnExit {
    std::shared_ptr<WarmGate> gate;
    ~OpenOnExit() { gate->opened.set_value(); }
};

// What the warm-up after the answer does with what it built, once the
// answer is stored: publishes the warmed build, else shares the answer.
compiler::WarmedHook warmed_hook(Publisher& publish, const Plan& plan,
                                 std::shared_ptr<WarmGate> gate) {
    return [&publish, plan, gate](Result<compiler::JitResult, compiler::JitError> second) {
        gate->open.wait();
        if (second && second->warmed) {
            const auto& b = second->binary;
            publish.publish_warmed(plan,
                                   {reinterpret_cast<const std::uint8_t*>(b.data()), b.size()},
                                   gate->provenance);
        } else if (gate->share_answer) {
            publish.share(plan.fields, gate->answer, gate->provenance);
        }
    };
}

// The helper's request for `plan` on the device `id`.
compiler::JitRequest jit_request(const Config& config, const Plan& plan,
                                 const device_db::DeviceIdentity& id) {
    compiler::JitRequest req;
    req.device.platform_name = id.platform_name;
    req.device.device_name = id.name;
    req.device.driver_version = id.driver_version;
    req.device.vendor_id = id.vendor_id;
    if (id.device_uuid) {
        req.device.uuid_hex = to_hex(*id.device_uuid);
    }
    req.source = plan.input.source;
    req.options = plan.input.options;
    req.entry_points = plan.input.entry_points;
    for (const LinkUnit& u : plan.input.link) {
        req.units.push_back({u.source, u.options, u.headers});
    }
    req.compile_only = is_compile_only(plan.input.source, plan.input.link.size());
    if (plan.warmup_local_size > 0 && id.type == device_db::DeviceType::cpu) {
        compiler::WarmupLaunch w;
        w.global = {plan.warmup_local_size, 1, 1};
        w.local = {plan.warmup_local_size, 1, 1};
        req.warmup = w;
        // Pooled helpers answer before the warm-up, so the caller waits only
        // for the build; the warmed binary replaces the stored one afterwards.
        req.warm_after_reply = config.jit_helpers > 0;
    }
    return req;
}

}  // namespace

SingleFlight::SingleFlight(const Config& config, StoredTiers& stored, Publisher& publish,
                           Workers& workers, Counters& counters)
    : config_(config),
      stored_(stored),
      publish_(publish),
      workers_(workers),
      counters_(counters),
      // Helpers are told apart for closing; the hook runs only once
      // compiles start, when this object is complete.
      jit_(compiler::JitConfig{config.jit_helper,
                               {},
                               [this](pid_t pid) { helper_started(pid); },
                               config.jit_helpers,
                               config.jit_idle}) {}

std::shared_future<Compiled> SingleFlight::start(const Plan& plan,
                                                 const device_db::DeviceIdentity& id) {
    return launch(plan, jit_request(config_, plan, id));
}

std::shared_future<Compiled> SingleFlight::start_il(const Plan& plan,
                                                    const device_db::DeviceIdentity& id,
                                                    std::string il) {
    compiler::JitRequest req = jit_request(config_, plan, id);
    req.il = std::move(il);
    return launch(plan, std::move(req));
}

std::shared_future<Compiled> SingleFlight::launch(const Plan& plan, compiler::JitRequest req) {
    auto promise = std::make_shared<std::promise<Compiled>>();
    std::shared_future<Compiled> fut = promise->get_future().share();
    {
        std::lock_guard g(mu_);
        if (auto it = inflight_.find(plan.key); it != inflight_.end()) {
            return it->second;
        }
        inflight_.emplace(plan.key, fut);
    }
    std::function<void()> work = [this, plan, req = std::move(req), promise] {
        Compiled c;
        try {
            c = compile_now(plan, req);
        } catch (const std::exception& e) {
            c = compile_error(StatusCode::internal_error, e.what());
        }
        {
            std::lock_guard g(mu_);
            inflight_.erase(plan.key);
        }
        promise->set_value(std::move(c));
    };
    if (!workers_.start(work)) {
        work();  // no thread (or closing): compiled in the caller's
    }
    return fut;
}

Compiled SingleFlight::compile_now(const Plan& plan, const compiler::JitRequest& request) {
    const OpenOnExit gate{std::make_shared<WarmGate>()};
    auto lock = KeyLock::acquire(config_.dir, plan.key.hex(), plan.deadline);
    if (!lock && lock.error() == LockError::timed_out) {
        return compile_error(StatusCode::timeout,
                             "another process was compiling this key when the deadline passed");
    }
    if (store::Store* user = stored_.user()) {  // another process may have finished meanwhile
        if (auto hit = user->get(plan.fields); hit) {
            Compiled c = compile_error(StatusCode::ok, "");
            c.rung = Rung::user_store;
            c.bytes = std::move(hit->bytes);
            publish_.publish(plan, c.bytes, hit->info.provenance, c.rung, Publisher::Share::now,
                             &c.misses);
            return c;
        }
    }
    if (request.il.empty()) {  // a build of SPIR-V is counted in il_builds, once it built
        counters_.bump(Counter::jit_compiles);
    }
    const auto started = SteadyClock::now();
    auto r = jit_.compile(
        request, plan.deadline,
        request.warm_after_reply ? warmed_hook(publish_, plan, gate.gate) : compiler::WarmedHook{});
    helper_done();
    observe_compile(config_.metrics, started, plan.key.hex(),
                    r ? StatusCode::ok : map_failure(r.error().kind).status);
    const auto took =
        std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - started);
    if (!r) {
        return failed(plan, r.error(), took, !request.il.empty());
    }
    Compiled c = compile_error(StatusCode::ok, "");
    c.compile = took;
    c.bytes.assign(r->binary.begin(), r->binary.end());
    store::Provenance prov;
    prov.producer_version = "kcache " KCACHE_VERSION;
    prov.origin = store::Origin::jit;
    prov.build_time_ms = took.count() / 1000;
    prov.build_log = request.il.empty() ? r->log : "built from a stored SPIR-V module\n" + r->log;
    if (!request.il.empty()) {
        counters_.bump(Counter::il_builds);
    }
    if (r->warm_pending && stored_.writable_user() != nullptr) {
        // The warm-up's hook shares the better binary, or else this one.
        gate.gate->share_answer = true;
        gate.gate->answer = c.bytes;
    }
    publish_.publish(plan, c.bytes, prov, Rung::jit,
                     r->warm_pending ? Publisher::Share::later : Publisher::Share::now, &c.misses);
    if (!c.misses.empty()) {
        c.message = "compiled, but not stored: " + c.misses.back().detail;
    }
    gate.gate->provenance = std::move(prov);
    return c;
}

// A compile that failed: its status, and its failure record unless the
// cache is closing (helpers killed by close() say nothing about the key).
// A build of SPIR-V that failed is a rejected module, never a record that
// answers: the compile from source may still build the key.
Compiled SingleFlight::failed(const Plan& plan, const compiler::JitError& e,
                              std::chrono::microseconds took, bool from_il) {
    counters_.bump(Counter::jit_failures);
    auto m = map_failure(e.kind);
    if (from_il) {
        m.record = store::FailureKind::rejected_binary;
    }
    Compiled c = compile_error(m.status, std::string(from_il ? "SPIR-V " : "JIT ") +
                                             compiler::to_string(e.kind) + ": " + e.message +
                                             (e.log.empty() ? "" : "\n" + e.log));
    c.compile = took;
    bool shutting_down = false;
    {
        std::lock_guard g(mu_);
        shutting_down = closing_;
    }
    if (m.record && !shutting_down) {
        publish_.record_failure(plan, *m.record, c.message.substr(0, 4000), plan.budget.count(),
                                &c.misses);
    }
    return c;
}

std::vector<std::shared_future<Compiled>> SingleFlight::running() {
    std::vector<std::shared_future<Compiled>> pending;
    std::lock_guard g(mu_);
    for (auto& [key, fut] : inflight_) {
        pending.push_back(fut);
    }
    return pending;
}

void SingleFlight::drain(SteadyClock::time_point until) {
    jit_.drain(until);
}

void SingleFlight::close() {
    // Warm-ups after an answer finish (each by its compile's deadline), so
    // that a short-lived process such as `kcache warm` stores warmed binaries.
    jit_.drain();
    {
        std::lock_guard g(mu_);
        closing_ = true;
        for (pid_t pgid : helpers_) {
            ::kill(-pgid, SIGKILL);  // the runner reaps it and returns
        }
    }
    workers_.stop_starting();
    jit_.shutdown();  // pooled helpers, busy ones included: their compiles return now
    workers_.join_all();
    jit_.drain();  // a warm-up that began meanwhile was killed above: it ends now
}

void SingleFlight::helper_started(pid_t pid) {
    t_helper = pid;
    std::lock_guard g(mu_);
    helpers_.insert(pid);
    if (closing_) {
        ::kill(-pid, SIGKILL);
    }
}

void SingleFlight::helper_done() {
    std::lock_guard g(mu_);
    helpers_.erase(t_helper);
}

}  // namespace kcache::service
