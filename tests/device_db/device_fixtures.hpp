#pragma once
// Hand-made DeviceIdentity values and the built-in database for match and
// quirk tests; the loader's one-problem cases for its validation tests.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "kcache/device_db/database.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/device_db/loader.hpp"

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

// The only problem of parsing `text` as the data file `file`; fails the
// test (and returns an empty Diagnostic) unless there is exactly one.
inline Diagnostic only_problem(const std::string& text, const std::string& file) {
    auto r = parse_data_file(text, file);
    EXPECT_FALSE(r.ok()) << "expected a problem";
    if (r.ok()) {
        return {};
    }
    EXPECT_EQ(r.error().diagnostics.size(), 1u) << r.error().message;
    return r.error().diagnostics.empty() ? Diagnostic{} : r.error().diagnostics.front();
}

// A data file with one problem and what the loader must say about it, for
// the table-driven validation tests: a table of these instantiates
// DataFileProblem (its test is in loader_test.cpp).
struct OneProblem {
    std::string name;  // the case's name in test names
    std::string text;  // the file, read as "t.json"
    DeviceDbErrc code;
    std::string says;  // its Diagnostic::to_string()
};

// Cases print as their names in test output.
inline void PrintTo(const OneProblem& c, std::ostream* os) {
    *os << c.name;
}

// The test-name suffix of a OneProblem parameter.
inline std::string one_problem_name(const ::testing::TestParamInfo<OneProblem>& info) {
    return info.param.name;
}

// Parses a OneProblem's file and expects exactly its one problem.
class DataFileProblem : public ::testing::TestWithParam<OneProblem> {};

}  // namespace kcache::device_db::test
