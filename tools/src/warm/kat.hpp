#pragma once
// Known-answer tests of cached binaries on their device (`kcache verify
// --run`). The test itself (kernels_cl/, kcache/cl/kat.hpp) runs in the
// kcache-verify helper under a deadline, like a compile: a checksum-valid but
// wrong binary that loops forever or crashes the driver costs one entry its
// verdict, never the command.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "kcache/device_db/identity.hpp"
#include "kcache/store/types.hpp"

namespace kcache::cli {

enum class KatState {
    passed,         // the device result matched the reference
    failed,         // it did not (or the binary did not load or launch, or the helper crashed)
    timeout,        // the test did not finish by the deadline; the helper was killed
    no_kat,         // not a registry kernel, or not built from the registry's source for it
    device_absent,  // the device the binary was built for is not present
    error,          // the helper could not run (not found, bad reply): nothing was learnt
};

// Returns the state's name in `verify` output: "kat_passed", "kat_failed",
// "kat_timeout", "no_kat", "device_absent" or "kat_error".
const char* to_string(KatState s);

struct KatOutcome {
    KatState state = KatState::no_kat;
    std::string detail;
};

// Where kcache-verify is looked for: next to this executable (the build
// tree), else libexec/kcache relative to it (an install), else the installed path.
std::string verify_helper_path();

// Runs the known-answer test of `entry` in `helper` on the device of
// `devices` it was built for (same name, platform and driver), killing the
// helper when `timeout` passes.
KatOutcome run_kat(const std::string& helper, const std::vector<device_db::DeviceIdentity>& devices,
                   const store::Entry& entry, std::chrono::milliseconds timeout);

// Whether a binary loads: the helper builds a program from it and creates
// its kernels (kcache-verify --check load), so a binary that makes the driver
// abort or hang (PoCL asserts on a truncated one) costs the helper, never the
// command.
enum class LoadState {
    loaded,         // the driver built the program and created its kernels
    rejected,       // it refused the binary, crashed the helper or did not finish in time
    device_absent,  // the device the binary was built for is not present (nothing learnt)
    error,          // the helper could not run (nothing learnt)
};

struct LoadOutcome {
    LoadState state = LoadState::error;
    std::string detail;
};

// Deadline of one load check (a load takes milliseconds on a sound binary).
inline constexpr std::chrono::seconds kDefaultLoadTimeout{30};

// Loads binaries in the helper on the devices present, probed (in the probe
// child) at the first check; none when probing fails, so that every check then
// says device_absent with the reason.
class LoadCheck {
  public:
    explicit LoadCheck(std::chrono::milliseconds timeout = kDefaultLoadTimeout);
    // With the devices already probed.
    LoadCheck(std::vector<device_db::DeviceIdentity> devices, std::chrono::milliseconds timeout);
    LoadOutcome operator()(const store::Entry& entry);

  private:
    std::string helper_;
    std::optional<std::vector<device_db::DeviceIdentity>> devices_;
    std::string probe_problem_;
    std::chrono::milliseconds timeout_;
};

}  // namespace kcache::cli
