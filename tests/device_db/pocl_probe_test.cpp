// Identity probe on PoCL, a real OpenCL driver that has none of the optional
// extensions (cl_intel_device_attribute_query, cl_khr_device_uuid, cl_khr_pci_bus_info).
#include <gtest/gtest.h>

#include <cstdlib>

#include "kcache/device_db/database.hpp"
#include "kcache/device_db/identity.hpp"

namespace kcache::device_db {
namespace {

// The PoCL device's identity, or a test failure.
std::optional<OpenClDevice> pocl_device() {
    auto devices = list_opencl_devices();
    EXPECT_TRUE(devices.ok()) << devices.error().message;
    if (!devices.ok()) {
        return std::nullopt;
    }
    EXPECT_TRUE(devices->skipped.empty()) << devices->skipped.front();
    for (OpenClDevice& d : devices->devices) {
        if (d.identity.platform_name.find("Portable Computing Language") != std::string::npos) {
            return std::move(d);
        }
    }
    ADD_FAILURE() << "no PoCL platform among " << devices->devices.size() << " devices";
    return std::nullopt;
}

TEST(DeviceDbProbe, FillsTheCoreFields) {
    auto pocl = pocl_device();
    ASSERT_TRUE(pocl.has_value());
    const DeviceIdentity& id = pocl->identity;
    EXPECT_NE(id.vendor_id, 0u);
    EXPECT_NE(id.vendor_id, 0xffffffffu);
    EXPECT_FALSE(id.name.empty());
    EXPECT_FALSE(id.vendor.empty());
    EXPECT_FALSE(id.driver_version.empty());
    EXPECT_EQ(id.device_version.rfind("OpenCL ", 0), 0u) << id.device_version;
    EXPECT_EQ(id.opencl_c_version.rfind("OpenCL C ", 0), 0u) << id.opencl_c_version;
    EXPECT_EQ(id.platform_version.rfind("OpenCL ", 0), 0u) << id.platform_version;
    EXPECT_TRUE(id.address_bits == 32 || id.address_bits == 64) << id.address_bits;
    EXPECT_EQ(id.type, DeviceType::cpu);
    EXPECT_GT(id.max_work_group_size, 0u);
    EXPECT_GT(id.compute_units, 0u);
    EXPECT_GT(id.max_mem_alloc, 0u);
    EXPECT_FALSE(id.extensions.empty());
    EXPECT_EQ(id.fp64, id.has_extension("cl_khr_fp64"));
    EXPECT_EQ(id.fp16, id.has_extension("cl_khr_fp16"));
    EXPECT_TRUE(DriverVersion::parse_prefix(id.driver_version).has_value()) << id.driver_version;
}

TEST(DeviceDbProbe, FallsBackWhereExtensionsAreMissing) {
    auto pocl = pocl_device();
    ASSERT_TRUE(pocl.has_value());
    const DeviceIdentity& id = pocl->identity;
    // PoCL lacks the Intel query extension; its fields stay empty instead of failing.
    ASSERT_FALSE(id.has_extension("cl_intel_device_attribute_query"));
    EXPECT_FALSE(id.pci_device_id.has_value());
    EXPECT_FALSE(id.ip_version.has_value());
    if (!id.has_extension("cl_khr_device_uuid")) {
        EXPECT_FALSE(id.device_uuid.has_value());
        EXPECT_FALSE(id.driver_uuid.has_value());
    }
    if (!id.has_extension("cl_khr_pci_bus_info")) {
        EXPECT_FALSE(id.pci_bus.has_value());
    }
}

TEST(DeviceDbProbe, IsRepeatable) {
    auto first = pocl_device();
    ASSERT_TRUE(first.has_value());
    auto again = probe(first->device);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->name, first->identity.name);
    EXPECT_EQ(again->driver_version, first->identity.driver_version);
    EXPECT_EQ(again->extensions, first->identity.extensions);
    EXPECT_EQ(again->vendor_id, first->identity.vendor_id);
}

TEST(DeviceDbProbe, OfACpuMatchesNoGpuRecordOrQuirk) {
    auto pocl = pocl_device();
    ASSERT_TRUE(pocl.has_value());
    auto db = DeviceDb::builtin();
    ASSERT_TRUE(db.ok()) << db.error().message;
    // PoCL's CPU device may report vendor 0x8086 (it does here); it is still no Intel GPU.
    EXPECT_EQ(db->match(pocl->identity).level, MatchLevel::none);
    const char* was = std::getenv("POCL_KERNEL_CACHE");
    const std::string kept = was != nullptr ? was : "";
    ::unsetenv("POCL_KERNEL_CACHE");
    EXPECT_FALSE(db->quirks_for(pocl->identity).any());
    // With its kernel cache off, the one rule for PoCL: loads one at a time.
    ::setenv("POCL_KERNEL_CACHE", "0", 1);
    const QuirkDecision off = db->quirks_for(pocl->identity);
    ASSERT_EQ(off.rules.size(), 1u);
    EXPECT_EQ(off.rules[0]->id, "pocl-uncached-loads-one-at-a-time");
    EXPECT_TRUE(off.serialize_loads);
    if (was != nullptr) {
        ::setenv("POCL_KERNEL_CACHE", kept.c_str(), 1);
    } else {
        ::unsetenv("POCL_KERNEL_CACHE");
    }
}

TEST(DeviceDbProbe, KeyFieldsAreOrderedAndFilled) {
    auto pocl = pocl_device();
    ASSERT_TRUE(pocl.has_value());
    const auto fields = key_fields(pocl->identity);
    std::vector<std::string> names;
    for (const auto& [name, value] : fields) {
        names.push_back(name);
        const bool optional = name == "pci_device_id" || name == "ip_version" ||
                              name == "device_uuid" || name == "driver_uuid";
        if (!optional) {
            EXPECT_FALSE(value.empty()) << name;
        }
    }
    EXPECT_EQ(names, (std::vector<std::string>{
                         "vendor_id", "device_name", "device_type", "pci_device_id", "ip_version",
                         "driver_version", "device_version", "platform_name", "platform_version",
                         "opencl_c_version", "address_bits", "device_uuid", "driver_uuid",
                         "compiler_files"}));
    EXPECT_EQ(fields[2].second, "cpu");
    EXPECT_EQ(fields[3].second, "");  // no cl_intel_device_attribute_query on PoCL
}

TEST(DeviceDbProbe, OfAnInvalidDeviceIsAnOpenClError) {
    auto r = probe(nullptr);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, DeviceDbErrc::opencl);
}

}  // namespace
}  // namespace kcache::device_db
