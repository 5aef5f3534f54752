#include "kat.hpp"

#include <filesystem>

#include "cli.hpp"
#include "kcache/cl/kat.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/kernels/reference.hpp"
#include "kcache/store/key.hpp"

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

// The verdict kcache-verify printed ("state\ndetail\n"), or an error outcome.
KatOutcome read_verdict(const compiler::RunResult& r) {
    const std::string first = r.out.substr(0, r.out.find('\n'));
    std::string detail = r.out.size() > first.size() ? r.out.substr(first.size() + 1) : "";
    while (!detail.empty() && detail.back() == '\n') {
        detail.pop_back();
    }
    if (first == cl::to_string(cl::KatState::passed)) {
        return {KatState::passed, detail};
    }
    if (first == cl::to_string(cl::KatState::failed)) {
        return {KatState::failed, detail};
    }
    if (first == cl::to_string(cl::KatState::no_kat)) {
        return {KatState::no_kat, detail};
    }
    const std::string err = r.err.substr(0, r.err.find('\n'));
    if (r.exit_code == 2) {
        return {KatState::device_absent, err};
    }
    return {KatState::error, "kcache-verify exited with " + std::to_string(r.exit_code) +
                                 (err.empty() ? std::string() : ": " + err)};
}

}  // namespace

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
    const KatOutcome no_kat{KatState::no_kat, "no known-answer test for " + f.kernel_name};
    auto variant = kernels::parse_variant(f.kernel_name);
    if (!variant || !cl::has_kat(variant->kernel)) {
        return no_kat;  // not a registry kernel (e.g. an operator library's own)
    }
    auto rendered = kernels::render(*variant);
    if (!rendered || !kernels::variant_tolerance(*variant)) {
        return no_kat;
    }
    if (f.source_digest != kcache::sha256_hex(rendered->source)) {
        // Another kcache version's source (or a library's own kernel of that
        // name): this KAT tests the ABI of the registry's source only.
        return {KatState::no_kat, f.kernel_name + " was built from other source text than " +
                                      "this kcache's registry renders for it"};
    }
    if (!device_of(devices, f)) {
        return {KatState::device_absent, "device " + f.device_name + " is not present"};
    }
    compiler::SpawnSpec spec;
    spec.program = helper;
    spec.args = {"--variant",   variant->id(), "--options",     f.build_options, "--device",
                 f.device_name, "--platform",  f.platform_name, "--driver",      f.driver_version};
    spec.stdin_data.assign(entry.bytes.begin(), entry.bytes.end());
    const compiler::RunResult r = compiler::run(spec, compiler::Clock::now() + timeout);
    switch (r.outcome) {
        case compiler::ChildExit::timed_out:
            return {KatState::timeout, "the known-answer test did not finish within " +
                                           std::to_string(timeout.count()) +
                                           " ms; the helper was killed"};
        case compiler::ChildExit::signaled:
            return {KatState::failed, "the known-answer test crashed the helper (signal " +
                                          std::to_string(r.signal) + ")"};
        case compiler::ChildExit::spawn_failed:
            return {KatState::error,
                    "cannot start " + helper + ": " +
                        std::error_code(r.spawn_errno, std::generic_category()).message()};
        case compiler::ChildExit::exited:
            break;
    }
    return read_verdict(r);
}

}  // namespace kcache::cli
