// The layer's cache and its reports (see service.hpp).

#include "service.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <pthread.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <optional>
#include <sstream>
#include <system_error>
#include <thread>

#include "kcache/common/unique_fd.hpp"
#include "layer.hpp"

namespace kcache::layer {
namespace {

constexpr std::array<const char*, 4> kVerdictNames = {"hit", "jit", "fail", "pass"};
using Counts = std::array<unsigned long long, kVerdictNames.size()>;

// Verdicts are added to the counters file in batches: a locked
// read-modify-write of the file per build cost a hit about 20 us, some 3 % of
// a small program's load. A process that dies loses at most this many.
constexpr unsigned long long kFlushEvery = 16;

// The opening of the cache (open_early, ensure_open): `phase` and `opener`
// are guarded by `open_mutex`; what the opening sets (cache, live, opened,
// owner, counters, trace, deferred) is written by the one thread that
// claimed it, the opening thread or a build, and read by others after
// `done` or `ready`.
enum class Phase { idle, started };

struct State {
    std::unique_ptr<Cache> cache;       // owns it until it closes at exit
    std::atomic<Cache*> live{nullptr};  // what requests use; null once closed
    std::atomic<int> in_flight{0};      // CacheUse objects alive
    bool opened = false;                // the cache opened (else all passes through)
    pid_t owner = 0;                    // the process that opened it
    std::string counters;               // the counters file ("" when none is written)
    std::string includes;               // the include manifests' directory ("": none)
    bool trace = false;
    std::mutex pending_mutex;
    Counts pending{};  // verdicts not yet in the counters file
    unsigned long long pending_total = 0;
    std::array<std::atomic<bool>, kVerdictNames.size()> close_registered{};

    std::mutex open_mutex;
    Phase phase = Phase::idle;
    std::thread opener;                // the opening thread, until joined
    std::atomic<bool> claimed{false};  // the opening is taken (by the thread or a build)
    std::atomic<bool> done{false};     // the thread's opening is done
    std::optional<Config> deferred;    // loaded early, its store not made yet
    std::atomic<bool> ready{false};    // opened, or known not to open
};

State& state() {
    static auto* s = new State;  // lives to exit
    return *s;
}

// Set on the opening thread: it never waits for itself.
thread_local bool t_opener = false;

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

// The opening thread: the configuration, then the cache, unless its
// directory is not there yet (making it is left to the first build, so that
// an application that never builds leaves no store behind) or it does not
// open quietly (above). A build that
// needs the cache before this thread has begun opens it itself (the thread
// then does nothing): it would otherwise sleep until a thread not yet
// running had done all the work, and be woken late on a busy machine.
void open_in_background(State& s) {
    t_opener = true;
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

// Caller holds `s.open_mutex`.
void join_opener_locked(State& s) {
    if (s.opener.joinable() && !t_opener) {
        s.opener.join();
    }
}

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

// Adds `add` to the lines of the counters file.
void count(const std::string& path, const Counts& add) {
    const UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!fd.valid() || ::flock(fd.get(), LOCK_EX) != 0) {
        return;
    }
    std::string text(4096, '\0');
    const ssize_t n = ::pread(fd.get(), text.data(), text.size(), 0);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    Counts values{};
    std::istringstream in(text);
    std::string key;
    unsigned long long value = 0;
    while (in >> key >> value) {
        for (std::size_t i = 0; i < kVerdictNames.size(); ++i) {
            if (key == kVerdictNames[i]) {
                values[i] = value;
            }
        }
    }
    std::string out;
    for (std::size_t i = 0; i < kVerdictNames.size(); ++i) {
        values[i] += add[i];
        out += std::string(kVerdictNames[i]) + " " + std::to_string(values[i]) + "\n";
    }
    if (::pwrite(fd.get(), out.data(), out.size(), 0) == static_cast<ssize_t>(out.size())) {
        (void)::ftruncate(fd.get(), static_cast<off_t>(out.size()));
    }
}

// Caller holds `s.pending_mutex`.
void flush_locked(State& s) {
    if (s.pending_total != 0) {
        count(s.counters, s.pending);
        s.pending = {};
        s.pending_total = 0;
    }
}

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

// fork() waits for the opening thread, which the child would not have (its
// half-made cache with it), and holds the opening's lock across, so that no
// thread starts one meanwhile; the counters' and the program registry's
// locks too (in that order, each held briefly elsewhere), so that the child
// gets them unlocked and their data whole. The cache itself makes its own
// parts in the child (Cache). The opening thread itself starts no process
// with fork() (kcache's helpers are spawned, which runs no fork handler).
void before_fork() {
    if (!t_opener) {
        State& s = state();
        s.open_mutex.lock();
        join_opener_locked(s);
        s.pending_mutex.lock();
        lock_registry_for_fork();
    }
}
void after_fork() {
    if (!t_opener) {
        unlock_registry_after_fork();
        state().pending_mutex.unlock();
        state().open_mutex.unlock();
    }
}

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

std::string counters_path(const std::string& dir) {
    return dir + "/layer-counters";
}

const std::string& includes_dir() noexcept {
    return state().includes;
}

void open_early() noexcept {
    if (inside_cache()) {
        return;  // kcache's own calls, the opening thread's among them
    }
    State& s = state();
    if (s.ready.load(std::memory_order_acquire)) {
        return;
    }
    std::lock_guard lock(s.open_mutex);
    if (s.phase != Phase::idle) {
        return;
    }
    static const bool handlers = ::pthread_atfork(before_fork, after_fork, after_fork) == 0 &&
                                 std::atexit(close_at_exit) == 0;
    if (!handlers) {
        return;  // the first build opens it
    }
    try {
        s.opener = std::thread(open_in_background, std::ref(s));
        s.phase = Phase::started;
    } catch (const std::system_error&) {
        // No thread: the first build opens it.
    }
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
