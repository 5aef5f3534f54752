// Quirk rules: the shipped example rule matches inside its driver range and not just
// outside it; malformed rules are located errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "device_fixtures.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/device_db/loader.hpp"

namespace kcache::device_db {

using test::DataFileProblem;

namespace {

constexpr const char* kExampleRule = "dg2-resnet-no-grad-mismatch-example";

class DeviceDbQuirks : public test::BuiltinDbTest {
  protected:
    bool example_rule_applies(std::uint32_t pci_id, const std::string& driver) const {
        QuirkDecision d = db_.quirks_for(test::intel_gpu(pci_id, driver));
        for (const QuirkRule* r : d.rules) {
            if (r->id == kExampleRule) {
                EXPECT_TRUE(d.verify_before_use);
                return true;
            }
        }
        return false;
    }
};

TEST_F(DeviceDbQuirks, ExampleRuleMatchesDg2InsideItsDriverRange) {
    EXPECT_TRUE(example_rule_applies(0x56a0, "23.52.28202.14"));  // lower bound
    EXPECT_TRUE(example_rule_applies(0x56a0, "24.9.28717.12"));   // numerically inside
    EXPECT_TRUE(example_rule_applies(0x56a5, "24.13.29138.7"));   // upper bound, DG2-G11
    EXPECT_TRUE(example_rule_applies(0x56b3, "24.05.28454.6"));   // DG2-G12
}

TEST_F(DeviceDbQuirks, ExampleRuleDoesNotMatchJustOutsideItsRange) {
    EXPECT_FALSE(example_rule_applies(0x56a0, "23.52.28202.13"));
    EXPECT_FALSE(example_rule_applies(0x56a0, "24.13.29138.8"));
    EXPECT_FALSE(example_rule_applies(0x56a0, "24.22.29735.20"));
    EXPECT_FALSE(example_rule_applies(0x56a0, "not-a-version"));
}

TEST_F(DeviceDbQuirks, ExampleRuleDoesNotMatchOtherFamilies) {
    EXPECT_FALSE(example_rule_applies(0x9a49, "24.9.28717.12"));  // Tiger Lake
    EXPECT_FALSE(example_rule_applies(0x1234, "24.9.28717.12"));  // unknown Intel id
}

TEST_F(DeviceDbQuirks, MeteorLakeGetsALongJitTimeout) {
    QuirkDecision d = db_.quirks_for(test::intel_gpu(0x7d55, "23.17.26241.33"));
    ASSERT_TRUE(d.jit_timeout_ms.has_value());
    EXPECT_EQ(*d.jit_timeout_ms, 900000u);
    EXPECT_FALSE(d.deny);
}

TEST_F(DeviceDbQuirks, CpuDeviceGetsNoQuirks) {
    DeviceIdentity cpu = test::intel_gpu(std::nullopt, "24.9.28717.12");
    cpu.type = DeviceType::cpu;
    EXPECT_FALSE(db_.quirks_for(cpu).any());
}

TEST(DeviceDb, QuirkCriteriaCombineAndActionsMerge) {
    const std::string text = R"({"schema": 1, "quirks": [
{"id": "range", "match": {"pci_id_ranges": [{"first": "0x100", "last": "0x1ff"}]}, "actions": ["deny"]},
{"id": "list", "match": {"vendor": "0x8086", "pci_ids": ["0x150"]}, "actions": ["no_cached_binaries"], "jit_timeout_ms": 5},
{"id": "late", "match": {"driver": {"min": "2"}}, "jit_timeout_ms": 7}
]})";
    auto file = parse_data_file(text, "q.json");
    ASSERT_TRUE(file.ok()) << file.error().message;
    auto db = DeviceDb::from_files({std::move(*file)});
    ASSERT_TRUE(db.ok()) << db.error().message;

    QuirkDecision both = db->quirks_for(test::intel_gpu(0x150, "1.0"));
    EXPECT_EQ(both.rules.size(), 2u);
    EXPECT_TRUE(both.deny);
    EXPECT_TRUE(both.no_cached_binaries);
    EXPECT_EQ(both.jit_timeout_ms, 5u);

    QuirkDecision later_wins = db->quirks_for(test::intel_gpu(0x150, "2.1"));
    EXPECT_EQ(later_wins.rules.size(), 3u);
    EXPECT_EQ(later_wins.jit_timeout_ms, 7u);

    EXPECT_FALSE(db->quirks_for(test::intel_gpu(0x200, "1.0")).any());
    EXPECT_FALSE(db->quirks_for(test::intel_gpu(std::nullopt, "1.0")).any());
}

// A rule on a platform name and the process's environment: both must hold
// (an unset variable matches no value).
TEST(DeviceDb, QuirkMatchesAPlatformAndTheEnvironment) {
    auto file = parse_data_file(R"({"schema": 1, "quirks": [
{"id": "env", "match": {"platforms": ["Some Platform"], "environment": ["KCACHE_TEST_QUIRK_VAR=0"]},
 "actions": ["serialize_loads"]}]})",
                                "q.json");
    ASSERT_TRUE(file.ok()) << file.error().message;
    auto db = DeviceDb::from_files({std::move(*file)});
    ASSERT_TRUE(db.ok()) << db.error().message;
    DeviceIdentity id = test::intel_gpu(0x150, "1.0");
    id.platform_name = "Some Platform";
    ::unsetenv("KCACHE_TEST_QUIRK_VAR");
    EXPECT_FALSE(db->quirks_for(id).any());
    ::setenv("KCACHE_TEST_QUIRK_VAR", "1", 1);
    EXPECT_FALSE(db->quirks_for(id).any());
    ::setenv("KCACHE_TEST_QUIRK_VAR", "0", 1);
    const QuirkDecision d = db->quirks_for(id);
    EXPECT_TRUE(d.serialize_loads);
    EXPECT_FALSE(d.deny);
    id.platform_name = "Another Platform";
    EXPECT_FALSE(db->quirks_for(id).any());
    ::unsetenv("KCACHE_TEST_QUIRK_VAR");
}

// A quirks file holding `rule` on line 3.
std::string quirks_with(const std::string& rule) {
    return "{\"schema\": 1,\n\"quirks\": [\n" + rule + "\n]}\n";
}

// Quirk rules with one problem each.
const test::OneProblem kBadRules[] = {
    {"InvertedDriverRange",
     quirks_with(
         R"({"id": "x", "match": {"driver": {"min": "24.13.1", "max": "24.9.1"}}, "actions": ["deny"]})"),
     DeviceDbErrc::bad_range, "t.json:3: empty driver range: min 24.13.1 > max 24.9.1"},
    {"MalformedDriverVersion",
     quirks_with(R"({"id": "x", "match": {"driver": {"min": "24.x"}}, "actions": ["deny"]})"),
     DeviceDbErrc::bad_version,
     "t.json:3: malformed version \"24.x\" for \"min\" (expected numbers separated by dots)"},
    {"InvertedIdRange",
     quirks_with(
         R"({"id": "x", "match": {"pci_id_ranges": [{"first": "0x20", "last": "0x10"}]}, "actions": ["deny"]})"),
     DeviceDbErrc::bad_range, "t.json:3: empty pci_id range: first 0x0020 > last 0x0010"},
    {"UnknownAction",
     quirks_with(R"({"id": "x", "match": {"vendor": "0x8086"}, "actions": ["ignore"]})"),
     DeviceDbErrc::bad_value,
     "t.json:3: unknown quirk action \"ignore\" (verify_before_use, no_cached_binaries, deny or "
     "serialize_loads)"},
    {"EnvironmentEntryWithoutValue",
     quirks_with(
         R"({"id": "x", "match": {"environment": ["POCL_KERNEL_CACHE"]}, "actions": ["deny"]})"),
     DeviceDbErrc::bad_value,
     "t.json:3: environment entry \"POCL_KERNEL_CACHE\" is not NAME=value"},
    {"EmptyMatch", quirks_with(R"({"id": "x", "match": {}, "actions": ["deny"]})"),
     DeviceDbErrc::bad_value, "t.json:3: quirk match has no criterion"},
    {"NoActions", quirks_with(R"({"id": "x", "match": {"vendor": "0x8086"}})"),
     DeviceDbErrc::bad_value, "t.json:3: quirk has neither \"actions\" nor \"jit_timeout_ms\""},
    {"UnknownMatchKey",
     quirks_with(
         R"({"id": "x", "match": {"vendor": "0x8086", "os": "linux"}, "actions": ["deny"]})"),
     DeviceDbErrc::unknown_key, "t.json:3: unknown key \"os\" in quirk match"},
};

// DataFileProblem's test is in loader_test.cpp.
INSTANTIATE_TEST_SUITE_P(DeviceDbQuirks, DataFileProblem, ::testing::ValuesIn(kBadRules),
                         test::one_problem_name);

TEST(DeviceDb, QuirkLoaderRejectsDuplicateIds) {
    auto r = parse_data_file(R"({"schema": 1, "quirks": [
{"id": "x", "match": {"vendor": "0x8086"}, "actions": ["deny"]},
{"id": "x", "match": {"vendor": "0x8086"}, "actions": ["deny"]}]})",
                             "q.json");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, "q.json:3: duplicate quirk id \"x\" (first at line 2)");
}

}  // namespace
}  // namespace kcache::device_db
