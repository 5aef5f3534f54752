#pragma once
// Lists PCI display devices from Linux sysfs (/sys/class/drm) without loading any
// OpenCL driver: platform initialisation itself has been seen to hang.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/device_db/error.hpp"
#include "kcache/device_db/identity.hpp"

namespace kcache::device_db {

// One /sys/class/drm/cardN entry backed by a PCI device.
struct SysfsGpu {
    std::string card;  // "card0"
    std::uint32_t vendor_id = 0;
    std::uint32_t device_id = 0;
    std::uint32_t revision = 0;
    std::uint32_t pci_class = 0;         // e.g. 0x030000 (VGA), 0x038000 (display)
    std::optional<PciAddress> pci_slot;  // from uevent PCI_SLOT_NAME or the link
    std::string driver;                  // "i915", "xe"; empty when unbound
};

// A card that was present but could not be read, and why.
struct SysfsSkip {
    std::string card;
    std::string reason;
};

struct SysfsListing {
    std::vector<SysfsGpu> gpus;      // sorted by card name
    std::vector<SysfsSkip> skipped;  // non-GPU or unreadable cards, same order
};

// Reads `<sysfs_root>/class/drm/card*/device/{vendor,device,revision,class,uevent}`.
// Connector entries ("card0-DP-1") are ignored; non-display PCI classes and malformed
// files are reported in `skipped`. A missing drm directory is an empty listing; only an
// unreadable one is DeviceDbErrc::io.
Result<SysfsListing, DeviceDbError> list_sysfs_gpus(
    const std::filesystem::path& sysfs_root = "/sys");

}  // namespace kcache::device_db
