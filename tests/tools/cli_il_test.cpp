// CliIl.*: `kcache prebuild --il` on its own (a pack of SPIR-V alone), then
// `kcache warm` on the SPIR-V PoCL (label il: scripts/il-driver.sh) serving
// it through the IL rung, and a second process finding the native entries.

#include <gtest/gtest.h>

#include "cli_runner.hpp"
#include "il_support.hpp"
#include "kcache/store/store.hpp"

namespace kcache::test {
namespace {

class CliIl : public CliTest {};

TEST_F(CliIl, NoAotWithoutIlIsAUsageError) {
    const CliRun r = kcache({"prebuild", "--no-aot", "--output", (dir() / "p.kcpack").string()});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("--no-aot builds nothing without --il"), std::string::npos) << r.err;
}

TEST_F(CliIl, APackOfSpirvAloneIsServedThroughTheIlRungAndThenFromTheStore) {
    ASSERT_NE(test_device_il_version().find("SPIR-V"), std::string::npos)
        << "the test device reports no SPIR-V: run scripts/il-driver.sh (ctest -L il)";
    std::filesystem::create_directories(dir() / "packs");
    const auto pack = dir() / "packs" / "il.kcpack";
    const CliRun built = kcache(
        {"prebuild", "--il", "--no-aot", "--kernels", "dot", "--quiet", "--output", pack.string()});
    ASSERT_EQ(built.code, 0) << built.out << built.err;
    EXPECT_NE(built.out.find("8 binaries"), std::string::npos) << built.out;

    // Every entry is SPIR-V, keyed by the extensions its variant requires.
    const auto listed = kcache({"ls", "--pack", pack.string(), "--json"}).json();
    ASSERT_EQ(listed.size(), 8u);
    int fp16 = 0;
    for (const auto& e : listed) {
        const std::string format = e["fields"]["target_format"];
        EXPECT_EQ(format.rfind("spirv:1.2:", 0), 0u) << format;
        fp16 += format == "spirv:1.2:cl_khr_fp16" ? 1 : 0;
    }
    EXPECT_EQ(fp16, 2);  // dot's two half-arithmetic variants

    const std::vector<std::string> env = {"KCACHE_PACKS=" + (dir() / "packs").string()};
    const auto first = kcache({"warm", "--kernels", "dot", "--json", "--quiet"}, env);
    ASSERT_EQ(first.code, 0) << first.out << first.err;
    EXPECT_EQ(first.json()["built"], 6) << first.out;  // half arithmetic: unsupported here
    auto st = store::Store::open(store_dir());
    ASSERT_TRUE(st);
    auto entries = st->list();
    ASSERT_TRUE(entries);
    ASSERT_EQ(entries->size(), 6u);
    for (const auto& e : *entries) {
        EXPECT_EQ(e.provenance.build_log.rfind("built from a stored SPIR-V module", 0), 0u)
            << e.fields.kernel_name;
    }

    const auto second = kcache({"warm", "--kernels", "dot", "--json", "--quiet"}, env);
    ASSERT_EQ(second.code, 0) << second.out << second.err;
    EXPECT_EQ(second.json()["built"], 0) << second.out;
    EXPECT_EQ(second.json()["already_cached"], 6) << second.out;
}

}  // namespace
}  // namespace kcache::test
