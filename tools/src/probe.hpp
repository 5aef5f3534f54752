#pragma once
// OpenCL device probing in a child process under the watchdog: platform
// initialisation itself has been seen to hang, so `kcache` never calls the
// ICD loader in its own process for listing. The child is this executable
// run as `kcache devices --probe-child`; it prints the identities as JSON.

#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kcache/common/result.hpp"
#include "kcache/device_db/identity.hpp"

namespace kcache::cli {

// The hidden flag that makes `kcache devices` the probe child.
inline constexpr const char* kProbeChildFlag = "--probe-child";

// Default bound on the probe child.
inline constexpr std::chrono::seconds kDefaultProbeTimeout{30};

// Body of the probe child: prints every OpenCL device as a JSON array on
// stdout; returns 0, or 5 after printing the OpenCL error on stderr.
int run_probe_child();

// Why probing failed.
enum class ProbeErrc { timed_out, crashed, failed, bad_output };

struct ProbeError {
    ProbeErrc code;
    std::string message;
};

// Runs the probe child with `timeout` and returns the identities it found
// (empty when there is no platform).
Result<std::vector<device_db::DeviceIdentity>, ProbeError> probe_devices(
    std::chrono::milliseconds timeout);

// JSON form of an identity (the fields `kcache devices --json` shows).
nlohmann::json identity_to_json(const device_db::DeviceIdentity& id);
// Reads identity_to_json's form back; throws nlohmann::json::exception on a bad document.
device_db::DeviceIdentity identity_from_json(const nlohmann::json& j);

// "pthread-haswell (Portable Computing Language, driver 3.1)".
std::string describe(const device_db::DeviceIdentity& id);

}  // namespace kcache::cli
