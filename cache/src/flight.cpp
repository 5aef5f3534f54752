// Single-flight JIT: one compile per key at a time. Threads of this process
// share a future; processes share a per-key file lock and re-check the store
// once they hold it. The compile itself runs in kcache-jit under the watchdog.

#include <signal.h>

#include "cache_impl.hpp"
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

Compiled Cache::Impl::compile_now(const Plan& plan, const compiler::JitRequest& request) {
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
            return c;
        }
    }
    counters.jit_compiles++;
    auto started = SteadyClock::now();
    auto r = jit.compile(request, plan.deadline);
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
        if (m.record && user != nullptr && user->mode() == store::OpenMode::read_write) {
            (void)user->record_failure(plan.key, *m.record, c.message.substr(0, 4000));
        }
        return c;
    }
    c.status = StatusCode::ok;
    c.bytes.assign(r->binary.begin(), r->binary.end());
    if (user != nullptr && user->mode() == store::OpenMode::read_write) {
        store::Provenance prov;
        prov.producer_version = "kcache " KCACHE_VERSION;
        prov.origin = store::Origin::jit;
        prov.build_time_ms = c.compile.count() / 1000;
        prov.build_log = r->log;
        if (auto put = user->put(plan.fields, c.bytes, prov); !put) {
            c.message = "compiled, but not stored: " + put.error().message;
        }
    }
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
        for (auto b : *id.device_uuid) {
            static const char* digits = "0123456789abcdef";
            req.device.uuid_hex += digits[b >> 4];
            req.device.uuid_hex += digits[b & 15];
        }
    }
    req.source = plan.input.source;
    req.options = plan.input.options;
    req.entry_points = plan.input.entry_points;
    if (plan.warmup_local_size > 0 && id.type == device_db::DeviceType::cpu) {
        compiler::WarmupLaunch w;
        w.global = {plan.warmup_local_size, 1, 1};
        w.local = {plan.warmup_local_size, 1, 1};
        req.warmup = w;
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
    std::vector<Worker> joining;
    {
        std::lock_guard g(mu);
        closing = true;
        for (pid_t pgid : helpers) {
            ::kill(-pgid, SIGKILL);  // the runner reaps it and returns
        }
        joining.swap(workers);
    }
    for (auto& w : joining) {
        if (w.thread.joinable()) {
            w.thread.join();
        }
    }
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
