// Reads /sys/class/drm/cardN/device/* (see sysfs.hpp). Every file is small text written
// by the kernel: "0x8086\n" for ids, "DRIVER=i915\nPCI_SLOT_NAME=0000:00:02.0\n..." for
// uevent. Anything that does not look like that skips the card with the reason.
#include "kcache/device_db/sysfs.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <system_error>
#include <utility>

#include "field_reader.hpp"
#include "kcache/common/read_file.hpp"

namespace kcache::device_db {
namespace {

namespace fs = std::filesystem;

// True for "card" followed by digits only (not "card0-DP-1", not "renderD128").
bool is_card_name(const std::string& name) {
    return name.size() > 4 && name.compare(0, 4, "card") == 0 &&
           std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A sysfs attribute (its size reads as one page) through the bounded reader.
std::optional<std::string> read_small_file(const fs::path& path) {
    auto text = read_regular_file(path, 64 * 1024);
    if (!text) {
        return std::nullopt;
    }
    return std::move(*text);
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) {
        s.pop_back();
    }
    return s;
}

// Reads one "0x…" id file; on failure sets `reason`.
std::optional<std::uint32_t> read_id(const fs::path& dir, const char* file, std::string& reason) {
    auto text = read_small_file(dir / file);
    if (!text) {
        reason = std::string("cannot read ") + file;
        return std::nullopt;
    }
    auto id = parse_hex_id(trim(*text));
    if (!id) {
        reason = std::string("malformed ") + file + " \"" + trim(*text) + "\"";
    }
    return id;
}

// Parses "dddd:bb:dd.f".
std::optional<PciAddress> parse_slot(const std::string& text) {
    unsigned domain = 0, bus = 0, device = 0, function = 0;
    char tail = 0;
    if (text.size() != 12 || std::sscanf(text.c_str(), "%4x:%2x:%2x.%1x%c", &domain, &bus, &device,
                                         &function, &tail) != 4) {
        return std::nullopt;
    }
    return PciAddress{domain, bus, device, function};
}

// The value of `key=` in a uevent file, or "".
std::string uevent_value(const std::string& uevent, const std::string& key) {
    std::istringstream in(uevent);
    for (std::string line; std::getline(in, line);) {
        if (line.compare(0, key.size() + 1, key + "=") == 0) {
            return line.substr(key.size() + 1);
        }
    }
    return "";
}

// Fills slot and driver from uevent, else from the device and driver links.
void read_location(const fs::path& dev, SysfsGpu& gpu) {
    const std::string uevent = read_small_file(dev / "uevent").value_or("");
    gpu.pci_slot = parse_slot(uevent_value(uevent, "PCI_SLOT_NAME"));
    std::error_code ec;
    if (!gpu.pci_slot) {
        const fs::path target = fs::read_symlink(dev, ec);
        gpu.pci_slot = ec ? std::nullopt : parse_slot(target.filename().string());
    }
    gpu.driver = uevent_value(uevent, "DRIVER");
    if (gpu.driver.empty()) {
        const fs::path target = fs::read_symlink(dev / "driver", ec);
        gpu.driver = ec ? "" : target.filename().string();
    }
}

// Reads one card; nullopt with `reason` set when it is skipped.
std::optional<SysfsGpu> read_card(const fs::path& card_dir, std::string& reason) {
    const fs::path dev = card_dir / "device";
    std::error_code ec;
    if (!fs::exists(dev / "vendor", ec)) {
        reason = "not a PCI device (no device/vendor file)";
        return std::nullopt;
    }
    SysfsGpu gpu;
    gpu.card = card_dir.filename().string();
    auto vendor = read_id(dev, "vendor", reason);
    auto device = vendor ? read_id(dev, "device", reason) : std::nullopt;
    auto revision = device ? read_id(dev, "revision", reason) : std::nullopt;
    auto pci_class = revision ? read_id(dev, "class", reason) : std::nullopt;
    if (!pci_class) {
        return std::nullopt;
    }
    if ((*pci_class >> 16) != 0x03) {
        char pci_class_text[16];
        std::snprintf(pci_class_text, sizeof pci_class_text, "0x%06x", *pci_class);
        reason = std::string("PCI class ") + pci_class_text + " is not a display controller";
        return std::nullopt;
    }
    gpu.vendor_id = *vendor;
    gpu.device_id = *device;
    gpu.revision = *revision;
    gpu.pci_class = *pci_class;
    read_location(dev, gpu);
    return gpu;
}

}  // namespace

Result<SysfsListing, DeviceDbError> list_sysfs_gpus(const fs::path& sysfs_root) {
    const fs::path drm = sysfs_root / "class" / "drm";
    SysfsListing out;
    std::error_code ec;
    if (!fs::exists(drm, ec)) {
        return out;
    }
    fs::directory_iterator it(drm, ec);
    if (ec) {
        return fail(DeviceDbError{DeviceDbErrc::io, drm.string() + ": " + ec.message(), {}});
    }
    for (; it != fs::directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!is_card_name(name)) {
            continue;
        }
        std::string reason;
        if (auto gpu = read_card(it->path(), reason)) {
            out.gpus.push_back(std::move(*gpu));
        } else {
            out.skipped.push_back(SysfsSkip{name, reason});
        }
    }
    if (ec) {
        return fail(DeviceDbError{DeviceDbErrc::io, drm.string() + ": " + ec.message(), {}});
    }
    // "card2" before "card10": shorter names first, then by text.
    auto by_card = [](const auto& a, const auto& b) {
        return std::pair(a.card.size(), a.card) < std::pair(b.card.size(), b.card);
    };
    std::sort(out.gpus.begin(), out.gpus.end(), by_card);
    std::sort(out.skipped.begin(), out.skipped.end(), by_card);
    return out;
}

}  // namespace kcache::device_db
