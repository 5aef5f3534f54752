// Single-flight JIT: one compile per key at a time. Threads of this process
// share a future; processes share a per-key file lock and re-check the store
// once they hold it. The compile itself runs in kcache-jit under the watchdog.

#include <signal.h>

#include <future>
#include <memory>

#include "cache_impl.hpp"
#include "kcache/common/hex.hpp"
#include "kcache/common/log.hpp"
#include "key_lock.hpp"

namespace kcache {
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

}  // namespace

StatusCode status_of(store::FailureKind kind) {
    switch (kind) {
        case store::FailureKind::timeout:
            return StatusCode::timeout;
        case store::FailureKind::crash:
            return StatusCode::crashed;
        case store::FailureKind::build_error:
            return StatusCode::build_error;
        case store::FailureKind::rejected_binary:
            break;
    }
    return StatusCode::device_error;
}

namespace {
Compiled compile_error(StatusCode s, std::string message) {
    Compiled c;
    c.status = s;
    c.message = std::move(message);
    return c;
}
}  // namespace

namespace {

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
}  // namespace

void Cache::Impl::store_warmed(const Plan& plan, const compiler::JitResult& warmed,
                               const store::Provenance& provenance) {
    if (writable_user_store() == nullptr) {
        return;  // nothing was stored to replace
    }
    const std::span<const std::uint8_t> bytes(
        reinterpret_cast<const std::uint8_t*>(warmed.binary.data()), warmed.binary.size());
    share(plan.fields, bytes, provenance);
    if (!store_put(plan, bytes, provenance, store::PutMode::replace, nullptr)) {
        return;  // counted and logged (no request waits for it)
    }
    counters.warmed_later++;
    keep_resident(plan, store::Bytes(bytes.begin(), bytes.end()), Rung::jit);
}

Compiled Cache::Impl::compile_now(const Plan& plan, const compiler::JitRequest& request) {
    const OpenOnExit gate{std::make_shared<WarmGate>()};
    auto lock = service::KeyLock::acquire(config.dir, plan.key.hex(), plan.deadline);
    if (!lock && lock.error() == service::LockError::timed_out) {
        return compile_error(StatusCode::timeout,
                             "another process was compiling this key when the deadline passed");
    }
    store::Store* user = tiers.user();
    if (user != nullptr) {  // another process may have finished while we waited
        if (auto hit = user->get(plan.fields); hit) {
            Compiled c;
            c.status = StatusCode::ok;
            c.rung = Rung::user_store;
            c.bytes = std::move(hit->bytes);
            publish(plan, c.bytes, hit->info.provenance, c.rung, Share::now, &c.misses);
            return c;
        }
    }
    counters.jit_compiles++;
    auto started = SteadyClock::now();
    compiler::WarmedHook on_warmed;
    if (request.warm_after_reply) {
        on_warmed = [this, plan,
                     g = gate.gate](Result<compiler::JitResult, compiler::JitError> second) {
            g->open.wait();
            if (second && second->warmed) {
                store_warmed(plan, *second, g->provenance);
            } else if (g->share_answer) {
                share(plan.fields, g->answer, g->provenance);
            }
        };
    }
    auto r = jit.compile(request, plan.deadline, std::move(on_warmed));
    {
        std::lock_guard g(mu);
        helpers.erase(t_helper);
    }
    Compiled c;
    c.compile = std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - started);
    if (!r) {
        counters.jit_failures++;
        auto m = map_failure(r.error().kind);
        c.status = m.status;
        c.message = std::string("JIT ") + compiler::to_string(r.error().kind) + ": " +
                    r.error().message + (r.error().log.empty() ? "" : "\n" + r.error().log);
        bool shutting_down = false;
        {
            std::lock_guard g(mu);
            shutting_down = closing;  // helpers killed by close() say nothing about the key
        }
        if (m.record && !shutting_down) {
            store_failure(plan, *m.record, c.message.substr(0, 4000), plan.budget.count(),
                          &c.misses);
        }
        return c;
    }
    c.status = StatusCode::ok;
    c.bytes.assign(r->binary.begin(), r->binary.end());
    store::Provenance prov;
    prov.producer_version = "kcache " KCACHE_VERSION;
    prov.origin = store::Origin::jit;
    prov.build_time_ms = c.compile.count() / 1000;
    prov.build_log = r->log;
    if (r->warm_pending && writable_user_store() != nullptr) {
        // The warm-up's hook shares the better binary, or else this one.
        gate.gate->share_answer = true;
        gate.gate->answer = c.bytes;
    }
    publish(plan, c.bytes, prov, Rung::jit, r->warm_pending ? Share::later : Share::now, &c.misses);
    if (!c.misses.empty()) {
        c.message = "compiled, but not stored: " + c.misses.back().detail;
    }
    gate.gate->provenance = std::move(prov);
    return c;
}

std::shared_future<Compiled> Cache::Impl::start_compile(const Plan& plan,
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
    if (plan.warmup_local_size > 0 && id.type == device_db::DeviceType::cpu) {
        compiler::WarmupLaunch w;
        w.global = {plan.warmup_local_size, 1, 1};
        w.local = {plan.warmup_local_size, 1, 1};
        req.warmup = w;
        // Pooled helpers answer before the warm-up, so the caller waits only
        // for the build; the warmed binary replaces the stored one afterwards.
        req.warm_after_reply = config.jit_helpers > 0;
    }
    std::lock_guard g(mu);
    if (auto it = inflight.find(plan.key); it != inflight.end()) {
        return it->second;
    }
    auto promise = std::make_shared<std::promise<Compiled>>();
    std::shared_future<Compiled> fut = promise->get_future().share();
    inflight.emplace(plan.key, fut);
    // Join the threads of finished compiles (they no longer take `mu`).
    std::erase_if(workers, [](Worker& w) {
        if (w.done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
            return false;
        }
        w.thread.join();
        return true;
    });
    workers.push_back(Worker{std::thread([this, plan, req = std::move(req), promise] {
                                 Compiled c;
                                 try {
                                     c = compile_now(plan, req);
                                 } catch (const std::exception& e) {
                                     c = compile_error(StatusCode::internal_error, e.what());
                                 }
                                 {
                                     std::lock_guard g2(mu);
                                     inflight.erase(plan.key);
                                 }
                                 promise->set_value(std::move(c));
                             }),
                             fut});
    return fut;
}

void Cache::Impl::join_workers() {
    // Warm-ups after an answer finish (each by its compile's deadline), so
    // that a short-lived process such as `kcache warm` stores warmed binaries.
    jit.drain();
    std::vector<Worker> joining;
    {
        std::lock_guard g(mu);
        closing = true;
        for (pid_t pgid : helpers) {
            ::kill(-pgid, SIGKILL);  // the runner reaps it and returns
        }
        joining.swap(workers);
    }
    jit.shutdown();  // pooled helpers, busy ones included: their compiles return now
    for (auto& w : joining) {
        if (w.thread.joinable()) {
            w.thread.join();
        }
    }
    jit.drain();  // a warm-up that began meanwhile was killed above: it ends now
}

void track_helper_start(Cache::Impl& impl, pid_t pid) {
    t_helper = pid;
    std::lock_guard g(impl.mu);
    impl.helpers.insert(pid);
    if (impl.closing) {
        ::kill(-pid, SIGKILL);
    }
}

}  // namespace kcache
