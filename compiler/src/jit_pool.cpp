#include "jit_pool.hpp"

#include <signal.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <system_error>

#include "jit_internal.hpp"

namespace kcache::compiler {
namespace {

using detail::compile_error;
using K = JitErrc;

std::string device_key(const DeviceSelector& d) {
    return d.platform_name + '\0' + d.device_name + '\0' + d.driver_version + '\0' +
           std::to_string(d.vendor_id) + '\0' + d.uuid_hex;
}

// Whether a helper that answered `frame` may serve again: only after a
// success or a build error (its driver state is as good as before), and not
// while a second reply is still to come.
bool reusable(const std::string& frame) {
    auto reply = decode_reply(frame);
    return reply && !reply->warm_pending &&
           (reply->status == ReplyStatus::ok || reply->status == ReplyStatus::build_error ||
            reply->status == ReplyStatus::device_not_found);
}

}  // namespace

JitPool::JitPool(const JitConfig& config)
    : size_(config.pool_size), idle_(config.idle_timeout), on_start_(config.on_start) {
    spec_.program = config.helper_path;
    spec_.env_overrides = config.env_overrides;
}

JitPool::~JitPool() {
    shutdown();
    drain(Clock::time_point::max());  // the followers' helpers are killed: they end now
    if (janitor_.joinable()) {
        janitor_.join();
    }
}

void JitPool::shutdown() {
    std::lock_guard lock(mu_);
    closing_ = true;
    for (auto it = entries_.begin(); it != entries_.end();) {
        if (!it->helper) {
            ++it;  // being started: acquire() retires it when the start returns
        } else if (it->busy) {
            ::kill(-it->helper->pid(), SIGKILL);  // still a zombie at worst: pid pinned
            ++it;
        } else {
            it->helper->retire();
            it = entries_.erase(it);
        }
    }
    freed_.notify_all();
    wake_.notify_all();
}

std::vector<pid_t> JitPool::pids() const {
    std::lock_guard lock(mu_);
    std::vector<pid_t> out;
    for (const Entry& e : entries_) {
        if (e.helper && e.helper->alive()) {
            out.push_back(e.helper->pid());
        }
    }
    return out;
}

Result<std::unique_ptr<PooledHelper>, int> JitPool::start_on_janitor() {
    std::promise<Result<std::unique_ptr<PooledHelper>, int>> promise;
    auto started = promise.get_future();
    {
        std::lock_guard lock(mu_);
        if (closing_) {  // the janitor may be gone
            return fail(ECANCELED);
        }
        // The janitor starts with the first helper: a cache that never
        // compiles (most processes, once warm) never pays for the thread.
        if (!janitor_.joinable()) {
            try {
                janitor_ = std::thread([this] { janitor(); });
            } catch (const std::system_error& e) {
                return fail(e.code().value());
            }
        }
        starts_.emplace_back([this, &promise] {
            auto h = PooledHelper::start(spec_);
            if (!h) {
                promise.set_value(fail(h.error()));
            } else {
                promise.set_value(std::make_unique<PooledHelper>(std::move(*h)));
            }
        });
        wake_.notify_all();
    }
    return started.get();
}

Result<JitPool::Slot, JitError> JitPool::acquire(const std::string& device,
                                                 Clock::time_point deadline, bool& started) {
    std::unique_lock lock(mu_);
    for (;;) {
        if (closing_) {
            return fail(compile_error(K::spawn_failed, "the JIT helper pool is shut down"));
        }
        std::size_t of_device = 0;
        for (auto it = entries_.begin(); it != entries_.end();) {
            if (it->device != device) {
                ++it;
                continue;
            }
            if (!it->busy && !it->helper->alive()) {  // died while idle (killed from outside)
                it->helper->retire();
                it = entries_.erase(it);
                continue;
            }
            if (!it->busy) {
                it->busy = true;
                return it;
            }
            ++of_device;
            ++it;
        }
        if (of_device < size_) {
            entries_.push_back(Entry{device, nullptr, true, {}});
            const Slot slot = std::prev(entries_.end());
            lock.unlock();
            auto helper = start_on_janitor();
            lock.lock();
            if (!helper || closing_) {
                if (helper) {
                    (*helper)->retire();
                }
                entries_.erase(slot);
                freed_.notify_all();
                return fail(compile_error(K::spawn_failed,
                                          helper ? "the JIT helper pool is shut down"
                                                 : "cannot start kcache-jit: " +
                                                       std::string(std::strerror(helper.error())) +
                                                       " (helper " + spec_.program +
                                                       "; KCACHE_JIT_PATH names another "
                                                       "kcache-jit executable)"));
            }
            slot->helper = std::move(*helper);
            started = true;
            return slot;
        }
        if (freed_.wait_until(lock, deadline) == std::cv_status::timeout) {
            return fail(compile_error(
                K::timeout, "no kcache-jit helper of this device became free before the deadline"));
        }
    }
}

void JitPool::give_back(Slot slot, bool keep) {
    std::lock_guard lock(mu_);
    if (keep && !closing_) {
        slot->busy = false;
        slot->idle_since = Clock::now();
        wake_.notify_all();  // the janitor's next stop time may be sooner now
    } else {
        slot->helper->retire();
        entries_.erase(slot);
    }
    freed_.notify_all();
}

void JitPool::drain(Clock::time_point until) {
    std::unique_lock lock(mu_);
    followed_.wait_until(lock, until, [&] { return following_ == 0; });
}

namespace {

// The compile result an exchange ended with.
Result<JitResult, JitError> result_of(const Exchange& ex, const detail::ExchangeTimes& times) {
    switch (ex.end) {
        case ExchangeEnd::reply:
            return detail::interpret_reply(ex.reply, ex.err, -1, times);
        case ExchangeEnd::timed_out:
            return fail(compile_error(K::timeout, "compile passed its deadline; helper killed",
                                      detail::tail(ex.err)));
        case ExchangeEnd::bad_frame:
            return fail(compile_error(K::protocol, "bad reply from kcache-jit: " + ex.problem,
                                      detail::tail(ex.err)));
        case ExchangeEnd::died:
            break;
    }
    if (ex.status.signal) {
        return fail(detail::crash_error(*ex.status.signal, ex.err));
    }
    return fail(compile_error(K::protocol,
                              "kcache-jit exited with code " +
                                  std::to_string(ex.status.exit_code.value_or(-1)) +
                                  " before replying",
                              detail::tail(ex.err)));
}

// Tells `hook` (when set) how a warm-up ended; its own failure stays its own.
void tell(WarmedHook& hook, Result<JitResult, JitError> second) {
    if (hook) {
        try {
            hook(std::move(second));
        } catch (...) {
        }
    }
    hook = nullptr;  // nothing of the caller's outlives drain()
}

}  // namespace

void JitPool::follow_warmup(Slot slot, Clock::time_point deadline, WarmedHook on_warmed) {
    {
        std::lock_guard lock(mu_);
        ++following_;
    }
    // Shared with the thread, so that the hook is still here to be told when
    // no thread can be made.
    auto hook = std::make_shared<WarmedHook>(std::move(on_warmed));
    auto follow = [this, slot, deadline, hook] {
        const Exchange ex = slot->helper->exchange(std::string(), deadline);
        const bool keep = ex.end == ExchangeEnd::reply && reusable(ex.reply);
        tell(*hook, result_of(ex, {ex.sent, std::nullopt, ex.sent, ex.done}));
        give_back(slot, keep);
        std::lock_guard lock(mu_);
        --following_;
        followed_.notify_all();
    };
    try {
        std::thread(follow).detach();
    } catch (const std::system_error& e) {
        give_back(slot, false);  // its second reply cannot be read: retire it
        tell(*hook,
             fail(compile_error(K::spawn_failed,
                                std::string("no thread to follow the warm-up: ") + e.what())));
        std::lock_guard lock(mu_);
        --following_;
        followed_.notify_all();
    }
}

Result<JitResult, JitError> JitPool::compile(const JitRequest& request, Clock::time_point deadline,
                                             WarmedHook on_warmed) {
    detail::ExchangeTimes times;
    times.asked = Clock::now();
    bool started = false;
    auto slot = acquire(device_key(request.device), deadline, started);
    if (!slot) {
        return fail(std::move(slot.error()));
    }
    PooledHelper& helper = *(*slot)->helper;
    if (started) {
        times.spawned = times.asked;
        if (on_start_) {
            on_start_(helper.pid());
        }
    }
    const Exchange ex = helper.exchange(encode_request(request), deadline);
    times.sent = ex.sent;
    times.done = ex.done;
    auto result = result_of(ex, times);
    if (result && result->warm_pending) {
        follow_warmup(*slot, deadline, std::move(on_warmed));
    } else {
        give_back(*slot, ex.end == ExchangeEnd::reply && reusable(ex.reply));
    }
    return result;
}

void JitPool::stop_idle(Clock::time_point now, std::optional<Clock::time_point>& next) {
    for (auto it = entries_.begin(); it != entries_.end();) {
        if (it->busy || !it->helper) {
            ++it;
            continue;
        }
        const auto due = it->idle_since + idle_;
        if (due <= now || !it->helper->alive()) {
            it->helper->retire();
            it = entries_.erase(it);
            continue;
        }
        next = next ? std::min(*next, due) : due;
        ++it;
    }
}

void JitPool::janitor() {
    std::unique_lock lock(mu_);
    for (;;) {
        while (!starts_.empty()) {
            auto start = std::move(starts_.front());
            starts_.pop_front();
            lock.unlock();
            start();
            lock.lock();
        }
        if (closing_) {
            return;
        }
        std::optional<Clock::time_point> next;
        stop_idle(Clock::now(), next);
        if (next) {
            wake_.wait_until(lock, *next);
        } else {
            wake_.wait(lock);
        }
    }
}

}  // namespace kcache::compiler
