#include "kat.hpp"

#include <filesystem>

#include "cli.hpp"
#include "kcache/canary/binary_vouch.hpp"
#include "kcache/cl/kat.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/store/key.hpp"
#include "probe.hpp"

#ifndef KCACHE_VERIFY_INSTALL_PATH
#define KCACHE_VERIFY_INSTALL_PATH "/usr/local/libexec/kcache/kcache-verify"
#endif

namespace kcache::cli {
namespace {

const device_db::DeviceIdentity* device_of(const std::vector<device_db::DeviceIdentity>& devices,
                                           const store::KeyFields& f) {
    for (const device_db::DeviceIdentity& d : devices) {
        if (d.name == f.device_name && d.platform_name == f.platform_name &&
            d.driver_version == f.driver_version) {
            return &d;
        }
    }
    return nullptr;
}

// What kcache-verify printed: the state and detail lines on stdout, the
// first line of stderr.
struct Reply {
    std::string state;
    std::string detail;
    std::string err;
    // "kcache-verify exited with N[: err]".
    std::string exit_problem(int code) const {
        return "kcache-verify exited with " + std::to_string(code) +
               (err.empty() ? std::string() : ": " + err);
    }
};

Reply read_reply(const compiler::RunResult& r) {
    Reply reply{r.out.substr(0, r.out.find('\n')), {}, r.err.substr(0, r.err.find('\n'))};
    if (r.out.size() > reply.state.size()) {
        reply.detail = r.out.substr(reply.state.size() + 1);
    }
    while (!reply.detail.empty() && reply.detail.back() == '\n') {
        reply.detail.pop_back();
    }
    return reply;
}

// The verdict kcache-verify printed ("state\ndetail\n"), or an error outcome.
KatOutcome read_verdict(const compiler::RunResult& r) {
    const Reply reply = read_reply(r);
    const std::string& first = reply.state;
    const std::string& detail = reply.detail;
    if (first == cl::to_string(cl::KatState::passed)) {
        return {KatState::passed, detail};
    }
    if (first == cl::to_string(cl::KatState::failed)) {
        return {KatState::failed, detail};
    }
    if (first == cl::to_string(cl::KatState::no_kat)) {
        return {KatState::no_kat, detail};
    }
    if (r.exit_code == 2) {
        return {KatState::device_absent, reply.err};
    }
    return {KatState::error, reply.exit_problem(r.exit_code)};
}

// Runs `helper` with `mode` ("--variant ID" or "--check load") and the
// entry's device, options and binary, killed when `timeout` passes.
compiler::RunResult run_helper(const std::string& helper, std::vector<std::string> mode,
                               const store::Entry& entry, std::chrono::milliseconds timeout) {
    const store::KeyFields& f = entry.info.fields;
    compiler::SpawnSpec spec;
    spec.program = helper;
    spec.args = std::move(mode);
    spec.args.insert(spec.args.end(),
                     {"--options", f.build_options, "--device", f.device_name, "--platform",
                      f.platform_name, "--driver", f.driver_version});
    spec.stdin_data.assign(entry.bytes.begin(), entry.bytes.end());
    return compiler::run(spec, compiler::Clock::now() + timeout);
}

// Why the helper run `r` of `what` ended without exiting by itself.
std::string unfinished(const std::string& helper, const compiler::RunResult& r,
                       std::chrono::milliseconds timeout, const std::string& what) {
    switch (r.outcome) {
        case compiler::ChildExit::timed_out:
            return what + " did not finish within " + std::to_string(timeout.count()) +
                   " ms; the helper was killed";
        case compiler::ChildExit::signaled:
            return what + " crashed the helper (signal " + std::to_string(r.signal) + ")";
        case compiler::ChildExit::spawn_failed:
            return "cannot start " + helper + ": " +
                   std::error_code(r.spawn_errno, std::generic_category()).message();
        case compiler::ChildExit::exited:
            break;
    }
    return {};
}

// The verdict of a load check from the helper's run.
LoadOutcome load_verdict(const std::string& helper, const compiler::RunResult& r,
                         std::chrono::milliseconds timeout) {
    if (r.outcome != compiler::ChildExit::exited) {
        return {
            r.outcome == compiler::ChildExit::spawn_failed ? LoadState::error : LoadState::rejected,
            unfinished(helper, r, timeout, "loading the binary")};
    }
    const Reply reply = read_reply(r);
    if (r.exit_code == 0 && reply.state == "loaded") {
        return {LoadState::loaded, {}};
    }
    if (r.exit_code == 1 && reply.state == cl::to_string(cl::KatState::failed)) {
        return {LoadState::rejected, reply.detail};
    }
    if (r.exit_code == 2) {
        return {LoadState::device_absent, reply.err};
    }
    return {LoadState::error, reply.exit_problem(r.exit_code)};
}

}  // namespace

LoadCheck::LoadCheck(std::chrono::milliseconds timeout)
    : helper_(verify_helper_path()), timeout_(timeout) {}

LoadCheck::LoadCheck(std::vector<device_db::DeviceIdentity> devices,
                     std::chrono::milliseconds timeout)
    : helper_(verify_helper_path()), devices_(std::move(devices)), timeout_(timeout) {}

LoadOutcome LoadCheck::operator()(const store::Entry& entry) {
    if (!devices_) {
        auto probed = probe_devices(kDefaultProbeTimeout);
        devices_ = probed ? std::move(*probed) : std::vector<device_db::DeviceIdentity>{};
        probe_problem_ = probed ? std::string() : probed.error().message;
    }
    const store::KeyFields& f = entry.info.fields;
    if (!device_of(*devices_, f)) {
        return {LoadState::device_absent,
                "not loaded: device " + f.device_name + " is not present" +
                    (probe_problem_.empty() ? std::string() : " (" + probe_problem_ + ")")};
    }
    return load_verdict(helper_, run_helper(helper_, {"--check", "load"}, entry, timeout_),
                        timeout_);
}

const char* to_string(KatState s) {
    switch (s) {
        case KatState::passed:
            return "kat_passed";
        case KatState::failed:
            return "kat_failed";
        case KatState::timeout:
            return "kat_timeout";
        case KatState::no_kat:
            return "no_kat";
        case KatState::device_absent:
            return "device_absent";
        case KatState::error:
            break;
    }
    return "kat_error";
}

std::string verify_helper_path() {
    const std::filesystem::path here = std::filesystem::path(self_path()).parent_path();
    std::error_code ec;
    if (std::filesystem::exists(here / "kcache-verify", ec)) {
        return (here / "kcache-verify").string();
    }
#ifdef KCACHE_VERIFY_RELATIVE_PATH
    const auto relative = (here / KCACHE_VERIFY_RELATIVE_PATH).lexically_normal();
    if (std::filesystem::exists(relative, ec)) {
        return relative.string();
    }
#endif
    return KCACHE_VERIFY_INSTALL_PATH;
}

KatOutcome run_kat(const std::string& helper, const std::vector<device_db::DeviceIdentity>& devices,
                   const store::Entry& entry, std::chrono::milliseconds timeout) {
    const store::KeyFields& f = entry.info.fields;
    // The same rule as the check of binaries built elsewhere: one home.
    auto variant = service::kat_variant_or_why(f);
    if (!variant) {
        return {KatState::no_kat, variant.error().message};
    }
    if (!device_of(devices, f)) {
        return {KatState::device_absent, "device " + f.device_name + " is not present"};
    }
    const compiler::RunResult r = run_helper(helper, {"--variant", variant->id()}, entry, timeout);
    if (r.outcome != compiler::ChildExit::exited) {
        const KatState state = r.outcome == compiler::ChildExit::timed_out  ? KatState::timeout
                               : r.outcome == compiler::ChildExit::signaled ? KatState::failed
                                                                            : KatState::error;
        return {state, unfinished(helper, r, timeout, "the known-answer test")};
    }
    return read_verdict(r);
}

}  // namespace kcache::cli
