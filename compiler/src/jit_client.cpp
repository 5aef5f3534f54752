#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>

#include "jit_internal.hpp"
#include "jit_pool.hpp"
#include "kcache/common/own_path.hpp"
#include "kcache/compiler/jit.hpp"

#ifndef KCACHE_JIT_INSTALL_PATH
#define KCACHE_JIT_INSTALL_PATH "/usr/local/libexec/kcache/kcache-jit"
#endif

namespace kcache::compiler {
namespace detail {

std::string tail(const std::string& s, std::size_t n) {
    return s.size() <= n ? s : s.substr(s.size() - n);
}

JitError compile_error(JitErrc kind, std::string message, std::string log) {
    JitError e;
    e.kind = kind;
    e.message = std::move(message);
    e.log = std::move(log);
    return e;
}

}  // namespace detail

namespace {

using detail::compile_error;
using detail::tail;

JitErrc kind_of(ReplyStatus s) {
    switch (s) {
        case ReplyStatus::build_error:
            return JitErrc::build_error;
        case ReplyStatus::device_not_found:
            return JitErrc::device_not_found;
        case ReplyStatus::bad_request:
            return JitErrc::protocol;
        case ReplyStatus::invalid_binary:
            return JitErrc::invalid_binary;
        case ReplyStatus::driver_error:
        case ReplyStatus::ok:
            break;
    }
    return JitErrc::driver_error;
}

// Directory of the binary holding this function (executable or .so).
std::filesystem::path own_directory() {
    return own_image_path(reinterpret_cast<const void*>(&own_directory)).parent_path();
}

}  // namespace

const char* to_string(JitErrc k) {
    switch (k) {
        case JitErrc::timeout:
            return "timeout";
        case JitErrc::crash:
            return "crash";
        case JitErrc::build_error:
            return "build error";
        case JitErrc::device_not_found:
            return "device not found";
        case JitErrc::protocol:
            return "protocol error";
        case JitErrc::spawn_failed:
            return "spawn failed";
        case JitErrc::driver_error:
            return "driver error";
        case JitErrc::invalid_binary:
            return "invalid binary";
    }
    return "?";
}

std::string default_helper_path() {
    const auto here = own_directory();
    const auto beside = here / "kcache-jit";
    if (::access(beside.c_str(), X_OK) == 0) {
        return beside.string();
    }
#ifdef KCACHE_JIT_RELATIVE_PATH
    // An installed tree moved elsewhere (a staging root, an unpacked .deb):
    // the helper sits at the same place relative to the library.
    const auto relative = (here / KCACHE_JIT_RELATIVE_PATH).lexically_normal();
    if (::access(relative.c_str(), X_OK) == 0) {
        return relative.string();
    }
#endif
#ifdef KCACHE_JIT_BUILD_PATH
    // Not installed: a program run from the build tree (a test, an example)
    // uses the helper built beside it.
    if (::access(KCACHE_JIT_BUILD_PATH, X_OK) == 0) {
        return KCACHE_JIT_BUILD_PATH;
    }
#endif
    return KCACHE_JIT_INSTALL_PATH;
}

JitCompiler::JitCompiler(JitConfig config) : config_(std::move(config)) {
    if (config_.helper_path.empty()) {
        config_.helper_path = default_helper_path();
    }
    if (config_.pool_size > 0) {
        pool_ = std::make_unique<JitPool>(config_);
    }
}

JitCompiler::JitCompiler(JitCompiler&&) noexcept = default;
JitCompiler& JitCompiler::operator=(JitCompiler&&) noexcept = default;
JitCompiler::~JitCompiler() = default;

Result<JitResult, JitError> JitCompiler::compile(const JitRequest& request,
                                                 Clock::time_point deadline,
                                                 WarmedHook on_warmed) const {
    if (pool_ && request.address_space_cap == 0) {
        return pool_->compile(request, deadline, std::move(on_warmed));
    }
    SpawnSpec spec;
    spec.program = config_.helper_path;
    spec.env_overrides = config_.env_overrides;
    spec.stdin_data = encode_request(request);
    spec.stdout_limit = kMaxReplyPayload + kFrameHeaderSize;
    auto result = interpret_helper_run(run(spec, deadline, config_.on_start));
    if (!result && result.error().kind == JitErrc::spawn_failed) {
        JitError e = result.error();
        e.message += " (helper " + config_.helper_path +
                     "; KCACHE_JIT_PATH names another kcache-jit executable)";
        return fail(std::move(e));
    }
    return result;
}

void JitCompiler::drain(Clock::time_point until) const {
    if (pool_) {
        pool_->drain(until);
    }
}

void JitCompiler::shutdown() {
    if (pool_) {
        pool_->shutdown();
    }
}

std::vector<pid_t> JitCompiler::helper_pids() const {
    return pool_ ? pool_->pids() : std::vector<pid_t>{};
}

namespace detail {

JitError crash_error(int signal, const std::string& err) {
    auto e = compile_error(JitErrc::crash,
                           std::string("kcache-jit died of signal ") + std::to_string(signal) +
                               " (" + strsignal(signal) + ")",
                           tail(err));
    e.signal = signal;
    return e;
}

Result<JitResult, JitError> interpret_reply(const std::string& frame, const std::string& err,
                                            int exit_code, const ExchangeTimes& times) {
    using K = JitErrc;
    auto reply = decode_reply(frame);
    if (!reply) {
        const std::string how =
            exit_code >= 0 ? " (exit code " + std::to_string(exit_code) + ")" : std::string();
        return fail(compile_error(K::protocol,
                                  "bad reply from kcache-jit" + how + ": " + reply.error().message,
                                  tail(err)));
    }
    JitReply& a = *reply;
    if (a.status != ReplyStatus::ok) {
        auto log = a.build_log.empty() ? tail(err) : std::move(a.build_log);
        return fail(compile_error(kind_of(a.status), std::move(a.message), std::move(log)));
    }
    if (a.binary.empty()) {
        return fail(compile_error(K::invalid_binary, "kcache-jit reported success with no binary"));
    }
    JitResult result;
    result.binary = std::move(a.binary);
    result.log = std::move(a.build_log);
    result.warmed = a.warmed;
    result.warmup_note = std::move(a.warmup_note);
    result.warm_pending = a.warm_pending;
    result.helper_pid = static_cast<pid_t>(a.helper_pid);
    result.served = a.served;
    JitTimings& t = result.timings;
    t.helper = a.timings;
    t.wall = times.done - times.asked;
    // The helper stamps CLOCK_MONOTONIC, the clock steady_clock reads. Its
    // stamps are its word, not facts: each is clamped into the span this side
    // saw, so that a bad one gives a wrong figure, never an overflow.
    const auto at = [](std::uint64_t ns, Clock::time_point lo, Clock::time_point hi) {
        constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
        const auto stamp = Clock::time_point(std::chrono::duration_cast<Clock::duration>(
            std::chrono::nanoseconds(static_cast<std::int64_t>(std::min(ns, kMax)))));
        return std::clamp(stamp, lo, std::max(lo, hi));
    };
    const auto started =
        at(a.stamps.started_ns, times.spawned ? *times.spawned : Clock::time_point{}, times.done);
    if (times.spawned) {
        t.spawn = started - *times.spawned;
    }
    t.queued = (times.spawned ? *times.spawned : times.sent) - times.asked;
    t.transfer =
        (at(a.stamps.request_ns, times.asked, times.done) - std::max(times.sent, started)) +
        (times.done - at(a.stamps.reply_ns, times.asked, times.done));
    t.transfer = std::max(t.transfer, std::chrono::nanoseconds(0));
    return result;
}

}  // namespace detail

Result<JitResult, JitError> interpret_helper_run(const RunResult& run) {
    using K = JitErrc;
    switch (run.outcome) {
        case ChildExit::spawn_failed:
            return fail(compile_error(K::spawn_failed, std::string("cannot start kcache-jit: ") +
                                                           std::strerror(run.spawn_errno)));
        case ChildExit::timed_out:
            return fail(compile_error(K::timeout, "compile passed its deadline; helper killed",
                                      tail(run.err)));
        case ChildExit::signaled:
            return fail(detail::crash_error(run.signal, run.err));
        case ChildExit::exited:
            break;
    }
    const auto done = run.started + run.elapsed;
    return detail::interpret_reply(run.out, run.err, run.exit_code,
                                   {run.started, run.started, run.started, done});
}

}  // namespace kcache::compiler
