#pragma once
// Hand-made DeviceIdentity values and the built-in database for match and quirk tests.

#include <cstdint>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "kcache/device_db/database.hpp"
#include "kcache/device_db/identity.hpp"

namespace kcache::device_db::test {

// An Intel GPU as the Intel runtime would describe it.
inline DeviceIdentity intel_gpu(std::optional<std::uint32_t> pci_id, std::string driver,
                                std::optional<std::uint32_t> ip = std::nullopt) {
    DeviceIdentity id;
    id.vendor_id = 0x8086;
    id.type = DeviceType::gpu;
    id.name = "Intel(R) Graphics";
    id.pci_device_id = pci_id;
    id.ip_version = ip;
    id.driver_version = std::move(driver);
    return id;
}

// A fixture holding the built-in database.
class BuiltinDbTest : public ::testing::Test {
  protected:
    void SetUp() override {
        auto loaded = DeviceDb::builtin();
        ASSERT_TRUE(loaded.ok()) << loaded.error().message;
        db_ = std::move(*loaded);
    }
    DeviceDb db_;
};

}  // namespace kcache::device_db::test
