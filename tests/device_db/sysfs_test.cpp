// sysfs listing on a fixture tree shaped like /sys/class/drm.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "kcache/device_db/sysfs.hpp"
#include "temp_dir.hpp"

namespace kcache::device_db {
namespace {

namespace fs = std::filesystem;

class DeviceDbSysfs : public kcache::test::TempDirTest {
  protected:
    fs::path drm() const { return dir() / "class" / "drm"; }

    static void put(const fs::path& file, const std::string& text) {
        fs::create_directories(file.parent_path());
        std::ofstream(file) << text;
    }
    // A PCI function directory holding the id files sysfs has.
    static void pci_function(const fs::path& dev, const char* vendor, const char* device,
                             const char* revision, const char* pci_class) {
        put(dev / "vendor", std::string(vendor) + "\n");
        put(dev / "device", std::string(device) + "\n");
        put(dev / "revision", std::string(revision) + "\n");
        put(dev / "class", std::string(pci_class) + "\n");
    }

    void build_tree() {
        // card0: Tiger Lake iGPU, slot and driver from uevent.
        pci_function(drm() / "card0" / "device", "0x8086", "0x9a49", "0x01", "0x030000");
        put(drm() / "card0" / "device" / "uevent",
            "DRIVER=i915\nPCI_CLASS=30000\nPCI_ID=8086:9A49\nPCI_SLOT_NAME=0000:00:02.0\n");
        // card1: Arc A770; device is a link to its PCI directory, driver a link too.
        const fs::path pci = dir() / "devices" / "pci0000:00" / "0000:03:00.0";
        pci_function(pci, "0x8086", "0x56a0", "0x08", "0x030000");
        fs::create_directories(dir() / "bus" / "pci" / "drivers" / "xe");
        fs::create_symlink(dir() / "bus" / "pci" / "drivers" / "xe", pci / "driver");
        fs::create_directories(drm() / "card1");
        fs::create_symlink(pci, drm() / "card1" / "device");
        // Entries that are not cards.
        put(drm() / "card0-DP-1" / "status", "connected\n");
        put(drm() / "renderD128" / "dev", "226:128\n");
        put(drm() / "version", "drm 1.1.0\n");
        // card2: not a display controller (an audio function, say).
        pci_function(drm() / "card2" / "device", "0x8086", "0xa0c8", "0x20", "0x040300");
        // card3: malformed device id.
        pci_function(drm() / "card3" / "device", "0x8086", "0xzz", "0x00", "0x030000");
        // card4: a virtual device with no PCI files.
        put(drm() / "card4" / "device" / "uevent", "DRIVER=vgem\n");
        // card5: an empty vendor file.
        pci_function(drm() / "card5" / "device", "", "0x1234", "0x00", "0x030000");
        // card10: a second discrete GPU; listed after card1, not between card1 and card2.
        pci_function(drm() / "card10" / "device", "0x8086", "0xe20b", "0x00", "0x030000");
    }
};

TEST_F(DeviceDbSysfs, ListsGpusWithIdsSlotsAndDrivers) {
    build_tree();
    auto listing = list_sysfs_gpus(dir());
    ASSERT_TRUE(listing.ok()) << listing.error().message;
    ASSERT_EQ(listing->gpus.size(), 3u);
    EXPECT_EQ(listing->gpus[2].card, "card10");
    EXPECT_EQ(listing->gpus[2].device_id, 0xe20bu);
    EXPECT_FALSE(listing->gpus[2].pci_slot.has_value());  // neither uevent nor a link

    const SysfsGpu& igpu = listing->gpus[0];
    EXPECT_EQ(igpu.card, "card0");
    EXPECT_EQ(igpu.vendor_id, 0x8086u);
    EXPECT_EQ(igpu.device_id, 0x9a49u);
    EXPECT_EQ(igpu.revision, 0x01u);
    ASSERT_TRUE(igpu.pci_slot.has_value());
    EXPECT_EQ(igpu.pci_slot->to_string(), "0000:00:02.0");
    EXPECT_EQ(igpu.driver, "i915");

    const SysfsGpu& arc = listing->gpus[1];
    EXPECT_EQ(arc.card, "card1");
    EXPECT_EQ(arc.device_id, 0x56a0u);
    EXPECT_EQ(arc.revision, 0x08u);
    ASSERT_TRUE(arc.pci_slot.has_value());
    EXPECT_EQ(*arc.pci_slot, (PciAddress{0, 3, 0, 0}));
    EXPECT_EQ(arc.driver, "xe");
}

TEST_F(DeviceDbSysfs, SkipsNonGpusAndMalformedCardsWithReasons) {
    build_tree();
    auto listing = list_sysfs_gpus(dir());
    ASSERT_TRUE(listing.ok()) << listing.error().message;
    const SysfsSkip want[] = {
        {"card2", "PCI class 0x040300 is not a display controller"},
        {"card3", "malformed device \"0xzz\""},
        {"card4", "not a PCI device (no device/vendor file)"},
        {"card5", "malformed vendor \"\""},
    };
    ASSERT_EQ(listing->skipped.size(), std::size(want));
    for (std::size_t i = 0; i < std::size(want); ++i) {
        EXPECT_EQ(listing->skipped[i].card, want[i].card) << i;
        EXPECT_EQ(listing->skipped[i].reason, want[i].reason) << want[i].card;
    }
}

TEST_F(DeviceDbSysfs, MissingDrmDirectoryIsAnEmptyListing) {
    auto listing = list_sysfs_gpus(dir() / "nothing-here");
    ASSERT_TRUE(listing.ok());
    EXPECT_TRUE(listing->gpus.empty());
    EXPECT_TRUE(listing->skipped.empty());
}

TEST_F(DeviceDbSysfs, UnreadableDrmDirectoryIsAnIoError) {
    put(dir() / "class" / "drm", "a file, not a directory\n");
    auto listing = list_sysfs_gpus(dir());
    ASSERT_FALSE(listing.ok());
    EXPECT_EQ(listing.error().code, DeviceDbErrc::io);
}

TEST(DeviceDb, RealSysfsListsWithoutFailing) {
    // Whatever this machine has (often nothing): the call must succeed and not crash.
    auto listing = list_sysfs_gpus();
    ASSERT_TRUE(listing.ok()) << listing.error().message;
    for (const SysfsGpu& gpu : listing->gpus) {
        EXPECT_NE(gpu.vendor_id, 0u) << gpu.card;
    }
}

}  // namespace
}  // namespace kcache::device_db
