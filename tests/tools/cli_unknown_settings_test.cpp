// kcache doctor names every KCACHE_* variable kcache does not know, with the
// closest name it knows; a known one is not reported; the settings table it
// prints is the one docs/settings.md shows.

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli_runner.hpp"

namespace kcache::test {
namespace {

// The findings of `doctor --json` in section config named `name`.
std::vector<nlohmann::json> config_findings(const CliRun& doctor, const std::string& name) {
    std::vector<nlohmann::json> out;
    for (const auto& f : doctor.json()) {
        if (f["section"] == "config" && f["name"] == name) {
            out.push_back(f);
        }
    }
    return out;
}

// "KCACHE_" + `rest`, written so that the tree's scan for the names it reads
// (setting_table_test.cpp) does not take a typo of these tests for one.
std::string typo(const std::string& rest) {
    return "KCACHE_" + rest;
}

class CliUnknownSettings : public CliTest {};

TEST_F(CliUnknownSettings, DoctorNamesAnUnknownVariableWithTheClosestKnownName) {
    const CliRun r = kcache({"doctor", "--json"}, {typo("JIT_TIMEOUT=2s")});
    EXPECT_EQ(r.code, 1) << "an unknown variable is a problem: " << r.err;
    const auto found = config_findings(r, typo("JIT_TIMEOUT"));
    ASSERT_EQ(found.size(), 1u) << r.out;
    EXPECT_EQ(found[0]["level"], "problem");
    EXPECT_EQ(found[0]["value"], "\"2s\": unknown; did you mean KCACHE_JIT_TIMEOUT_MS?");
    // The library's warning, once, on stderr.
    const std::string warning =
        typo("JIT_TIMEOUT") + "=\"2s\": unknown, ignored; did you mean KCACHE_JIT_TIMEOUT_MS?";
    const auto at = r.err.find(warning);
    ASSERT_NE(at, std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(warning, at + 1), std::string::npos) << "warned twice: " << r.err;
}

TEST_F(CliUnknownSettings, AKnownVariableIsNotReported) {
    const CliRun r = kcache({"doctor", "--json"}, {"KCACHE_JIT_TIMEOUT_MS=2000"});
    EXPECT_TRUE(config_findings(r, "KCACHE_JIT_TIMEOUT_MS").empty()) << r.out;
    EXPECT_EQ(r.err.find("unknown"), std::string::npos) << r.err;
    bool shown = false;
    for (const auto& f : config_findings(r, "jit_timeout_ms")) {
        shown = f["value"] == "2000  [environment]";
    }
    EXPECT_TRUE(shown) << r.out;
}

TEST_F(CliUnknownSettings, AnUnknownConfigFileKeyIsNamedWithTheClosestKey) {
    std::ofstream(dir() / "config") << "max_programs = 10\nmax_hot_byte = 1M\n";
    const CliRun r = kcache({"doctor"}, {"KCACHE_CONFIG=" + (dir() / "config").string()});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("config:2: max_hot_byte: unknown setting; did you mean max_hot_bytes?"),
              std::string::npos)
        << r.err;
}

TEST_F(CliUnknownSettings, TheDocsShowTheTableOfSettings) {
    const CliRun r = kcache({"doctor", "--settings-table"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("| `KCACHE_JIT_TIMEOUT_MS` | `jit_timeout_ms` | milliseconds between 1"),
              std::string::npos)
        << r.out;
    std::ifstream in(std::string(KCACHE_SOURCE_DIR) + "/docs/settings.md");
    std::stringstream docs;
    docs << in.rdbuf();
    EXPECT_NE(docs.str().find(r.out), std::string::npos)
        << "docs/settings.md's table differs from `kcache doctor --settings-table`; paste:\n"
        << r.out;
}

}  // namespace
}  // namespace kcache::test
