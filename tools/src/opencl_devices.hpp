#pragma once
// The OpenCL devices a command builds for, opened in this process with one
// context each. Platform initialisation runs under a guard thread that ends
// the process (exit 5) when it does not return in time, so a driver that
// hangs there fails the command instead of hanging it, without the cost of a
// second process (commands that need no OpenCL in-process use probe.hpp).

#include <optional>
#include <string>
#include <vector>

#include "kcache/cl/handles.hpp"
#include "kcache/device_db/identity.hpp"

namespace kcache::cli {

struct OpenedDevice {
    cl_device_id device = nullptr;
    cl::ContextHandle context;
    device_db::DeviceIdentity identity;
};

// Indices into `ids` chosen by `selector`: all when absent; else the one at
// that index, or every device whose name contains the text (case-insensitive).
std::vector<std::size_t> select_devices(const std::vector<device_db::DeviceIdentity>& ids,
                                        const std::optional<std::string>& selector);

// The selected devices with a context each; on failure prints why (prefixed
// by `command`) and sets `exit_code`: not_found for a selector that matches
// nothing, environment when OpenCL is unusable or offers no device.
std::optional<std::vector<OpenedDevice>> open_devices(std::string_view command,
                                                      const std::optional<std::string>& selector,
                                                      int& exit_code);

// The identities of the selected devices, probed only in the child (no
// OpenCL in this process); errors as open_devices.
std::optional<std::vector<device_db::DeviceIdentity>> probe_selected(
    std::string_view command, const std::optional<std::string>& selector, int& exit_code);

}  // namespace kcache::cli
