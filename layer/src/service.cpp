// The layer's cache and its reports (see service.hpp).

#include "service.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include "layer.hpp"
#include "service_state.hpp"

namespace kcache::layer {

State& state() {
    static auto* s = new State;  // lives to exit
    return *s;
}

thread_local bool t_opener = false;

namespace {

// Verdicts are added to the counters file in batches: a locked
// read-modify-write of the file per build cost a hit about 20 us, some 3 % of
// a small program's load. A process that dies loses at most this many.
constexpr unsigned long long kFlushEvery = 16;

void say(const std::string& line) {
    const std::string text = "kcache layer: " + line + "\n";
    std::fwrite(text.data(), 1, text.size(), stderr);
}

// The environment's configuration for an application run under the layer
// (false, said once, when it does not load). The layer keeps no built
// programs of its own (the application owns each program it builds), nor
// their binaries: a hit is loaded from the memory its hot copy was read
// into, which the next hit reads into again, where keeping the bytes took
// fresh memory (page faults) at every hit for a build the application
// rarely repeats. KCACHE_TRACE=1 asks for the layer's lines only.
bool load(State& s, Config& config) {
    std::string error;
    if (!load_config(config, error)) {
        say("configuration: " + error + "; every OpenCL call goes straight to the driver");
        return false;
    }
    const char* trace = std::getenv("KCACHE_TRACE");
    s.trace = trace != nullptr && *trace != '\0';
    if (config.trace == "1") {
        config.trace.clear();
    }
    config.max_programs = 0;
    config.max_resident_bytes = 0;
    return true;
}

void open_with(State& s, const Config& config) {
    Outcome why;
    {
        InsideCache inside;
        s.cache = Cache::open(config, &why);
    }
    if (!s.cache) {
        say("the cache could not be opened (" + why.message +
            "); every OpenCL call goes straight to the driver");
        return;
    }
    s.opened = true;
    s.owner = ::getpid();
    s.live.store(s.cache.get());
    if (!config.read_only && !config.disabled) {
        s.counters = counters_path(config.dir.string());
        s.includes = config.dir.string() + "/layer-includes";
    }
}

// Whether opening `config`'s cache sets up no library that registers exit
// handlers of its own: a local store alone. A remote tier (libcurl and
// OpenSSL, which registers OPENSSL_cleanup at its set-up) or packs (their
// signatures) are opened by the first build instead: exit would run such a
// handler, registered after close_at_exit, before it, while the thread
// still used that library.
bool opens_quietly(const Config& config) {
    return config.remote_urls.empty() && config.packs.empty();
}

}  // namespace

// The opening thread: the configuration, then the cache, unless its
// directory is not there yet (making it is left to the first build, so that
// an application that never builds leaves no store behind) or it does not
// open quietly (above). A build that
// needs the cache before this thread has begun opens it itself (the thread
// then does nothing): it would otherwise sleep until a thread not yet
// running had done all the work, and be woken late on a busy machine.
void open_in_background(State& s) {
    if (s.claimed.exchange(true)) {
        return;  // a build got there first
    }
    InsideCache inside;  // what the opening asks of OpenCL passes through
    Config config;
    if (load(s, config)) {
        std::error_code ec;
        if (std::filesystem::is_directory(config.dir, ec) && opens_quietly(config)) {
            open_with(s, config);
        } else {
            s.deferred = std::move(config);
        }
    }
    s.done.store(true, std::memory_order_release);
    s.done.notify_all();
}

namespace {

// Waits for the opening thread's work: it runs now, so for a while the
// waiter yields (a sleep's wake-up costs more than what is left of it),
// then sleeps.
void wait_for_opening(const State& s) {
    const auto yield_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    while (!s.done.load(std::memory_order_acquire)) {
        if (std::chrono::steady_clock::now() < yield_until) {
            std::this_thread::yield();
        } else {
            s.done.wait(false, std::memory_order_acquire);
        }
    }
}

}  // namespace

void join_opener_locked(State& s) {
    if (s.opener.joinable() && !t_opener) {
        s.opener.join();
    }
}

namespace {

// Opens the cache unless it is open: waits for the opening thread when it
// has begun, else opens it here (and the thread, if any, does nothing); a
// store the thread left to be made is made here.
void ensure_open(State& s) {
    if (s.ready.load(std::memory_order_acquire)) {
        return;
    }
    std::lock_guard lock(s.open_mutex);
    if (s.ready.load(std::memory_order_relaxed)) {
        return;
    }
    if (s.phase == Phase::started && s.claimed.exchange(true)) {
        wait_for_opening(s);
        if (s.deferred) {
            open_with(s, *s.deferred);
            s.deferred.reset();
        }
    } else {
        Config config;
        if (load(s, config)) {
            open_with(s, config);
        }
    }
    s.ready.store(true, std::memory_order_release);
}

// Caller holds `s.pending_mutex`.
void flush_locked(State& s) {
    if (s.pending_total != 0) {
        add_counts(s.counters, s.pending);
        s.pending = {};
        s.pending_total = 0;
    }
}

}  // namespace

// At exit: the verdicts not yet counted go to the counters file, and the
// cache closes, as the library's callers' caches do: the store writes back
// this process's hits (last use and counts: the eviction order, `kcache
// stats`), and the warm-up that follows a JIT answer on a CPU device is
// stored. A request still in flight on another thread keeps it open, and
// so does a forked child (its helpers and workers are the parent's).
void close_at_exit() {
    State& s = state();
    {
        // The opening thread, if any, is done first: nothing is torn down
        // under it, and what it set is seen here.
        std::lock_guard lock(s.open_mutex);
        join_opener_locked(s);
    }
    {
        std::lock_guard lock(s.pending_mutex);
        flush_locked(s);
    }
    if (s.owner == ::getpid() && s.live.exchange(nullptr) != nullptr && s.in_flight.load() == 0) {
        s.cache.reset();
    }
}

namespace {

// Registers close_at_exit after the first build of each verdict: exit runs
// handlers in the reverse order of their registration, so it runs before the
// destructors of what libkcache set up for the builds so far. open_early
// registers it before the opening thread starts, so that it runs before the
// destructors of everything libkcache had set up by then (the opening
// registers none of its own), and closes a cache no build used.
void close_at_exit_after(std::size_t verdict) {
    State& s = state();
    if (s.opened && !s.close_registered[verdict].exchange(true)) {
        std::atexit(close_at_exit);
    }
}

}  // namespace

const std::string& includes_dir() noexcept {
    return state().includes;
}

CacheUse::CacheUse() {
    State& s = state();
    ensure_open(s);
    s.in_flight.fetch_add(1);
    cache_ = s.live.load();
}

CacheUse::~CacheUse() {
    state().in_flight.fetch_sub(1);
}

bool traced() {
    State& s = state();
    ensure_open(s);
    return s.opened && s.trace;
}

void note(Verdict verdict, const Outcome* outcome, double ms, std::string_view detail) {
    State& s = state();
    ensure_open(s);
    if (!s.opened) {
        return;  // passing everything through, as said once
    }
    const auto index = static_cast<std::size_t>(verdict);
    close_at_exit_after(index);
    const char* name = kVerdictNames[index];
    if (!s.counters.empty()) {
        std::lock_guard lock(s.pending_mutex);
        ++s.pending[index];
        if (++s.pending_total >= kFlushEvery) {
            flush_locked(s);
        }
    }
    if (!s.trace) {
        return;
    }
    std::string verdict_upper(name);
    for (char& c : verdict_upper) {
        c = static_cast<char>(c - 'a' + 'A');
    }
    char millis[32];
    std::snprintf(millis, sizeof millis, "%.2f", ms);
    const std::string rung = outcome ? to_string(outcome->rung) : "driver";
    const std::string key = outcome ? outcome->key.substr(0, 12) : "-";
    say(verdict_upper + " " + rung + " " + (key.empty() ? "-" : key) + " " + millis + " ms" +
        (detail.empty() ? "" : " " + std::string(detail)));
}

}  // namespace kcache::layer
