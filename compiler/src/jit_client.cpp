#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "kcache/compiler/jit.hpp"

#ifndef KCACHE_JIT_INSTALL_PATH
#define KCACHE_JIT_INSTALL_PATH "/usr/local/libexec/kcache/kcache-jit"
#endif

namespace kcache::compiler {
namespace {

// The last `n` bytes of `s`, for error messages.
std::string tail(const std::string& s, std::size_t n = 4000) {
    return s.size() <= n ? s : s.substr(s.size() - n);
}

JitError error(JitErrc kind, std::string message, std::string log = {}) {
    JitError e;
    e.kind = kind;
    e.message = std::move(message);
    e.log = std::move(log);
    return e;
}

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
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&own_directory), &info) != 0 && info.dli_fname) {
        std::error_code ec;
        auto p = std::filesystem::canonical(info.dli_fname, ec);
        if (!ec) {
            return p.parent_path();
        }
    }
    std::error_code ec;
    return std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
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
    if (const char* env = std::getenv("KCACHE_JIT_PATH"); env && *env) {
        return env;
    }
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
    return KCACHE_JIT_INSTALL_PATH;
}

JitCompiler::JitCompiler(JitConfig config) : config_(std::move(config)) {
    if (config_.helper_path.empty()) {
        config_.helper_path = default_helper_path();
    }
}

Result<JitResult, JitError> JitCompiler::compile(const JitRequest& request,
                                                 Clock::time_point deadline) const {
    SpawnSpec spec;
    spec.program = config_.helper_path;
    spec.env_overrides = config_.env_overrides;
    spec.stdin_data = encode_request(request);
    spec.stdout_limit = kMaxReplyPayload + kFrameHeaderSize;
    return interpret_helper_run(run(spec, deadline, config_.on_start));
}

Result<JitResult, JitError> interpret_helper_run(const RunResult& run) {
    using K = JitErrc;
    switch (run.outcome) {
        case ChildExit::spawn_failed:
            return fail(error(K::spawn_failed, std::string("cannot start kcache-jit: ") +
                                                   std::strerror(run.spawn_errno)));
        case ChildExit::timed_out:
            return fail(
                error(K::timeout, "compile passed its deadline; helper killed", tail(run.err)));
        case ChildExit::signaled: {
            auto e = error(K::crash,
                           std::string("kcache-jit died of signal ") + std::to_string(run.signal) +
                               " (" + strsignal(run.signal) + ")",
                           tail(run.err));
            e.signal = run.signal;
            return fail(std::move(e));
        }
        case ChildExit::exited:
            break;
    }
    auto reply = decode_reply(run.out);
    if (!reply) {
        return fail(error(K::protocol,
                          "bad reply from kcache-jit (exit code " + std::to_string(run.exit_code) +
                              "): " + reply.error(),
                          tail(run.err)));
    }
    JitReply& a = *reply;
    if (a.status != ReplyStatus::ok) {
        auto log = a.build_log.empty() ? tail(run.err) : std::move(a.build_log);
        return fail(error(kind_of(a.status), std::move(a.message), std::move(log)));
    }
    if (a.binary.empty()) {
        return fail(error(K::invalid_binary, "kcache-jit reported success with no binary"));
    }
    JitResult result;
    result.binary = std::move(a.binary);
    result.log = std::move(a.build_log);
    result.timings.helper = a.timings;
    result.timings.wall = run.elapsed;
    result.warmed = a.warmed;
    result.warmup_note = std::move(a.warmup_note);
    return result;
}

}  // namespace kcache::compiler
