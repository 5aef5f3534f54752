// CliIl.*: `kcache prebuild --il` on its own (a pack of SPIR-V alone), then
// `kcache warm` on the SPIR-V PoCL (label il: scripts/il-driver.sh) serving
// it through the IL rung, and a second process finding the native entries;
// `kcache warm` storing each variant's SPIR-V there, which another store
// serves through the IL rung, and saying so when the tools are missing.

#include <gtest/gtest.h>

#include <set>

#include "cli_runner.hpp"
#include "il_support.hpp"
#include "kcache/store/store.hpp"

namespace kcache::test {
namespace {

class CliIl : public CliTest {};

// A store's entries: SPIR-V modules and native binaries.
struct StoreParts {
    std::vector<store::EntryInfo> spirv, native;
};

StoreParts store_parts(const std::filesystem::path& dir) {
    StoreParts parts;
    auto st = store::Store::open(dir);
    if (!st) {
        ADD_FAILURE() << "cannot open the store " << dir;
        return parts;
    }
    auto entries = st->list();
    if (!entries) {
        ADD_FAILURE() << "cannot list the store " << dir;
        return parts;
    }
    for (const auto& e : *entries) {
        (e.fields.compiler_id == "spirv" ? parts.spirv : parts.native).push_back(e);
    }
    return parts;
}

// Puts `entries` of the store in `from` into a store in `to`.
void copy_entries(const std::filesystem::path& from, const std::vector<store::EntryInfo>& entries,
                  const std::filesystem::path& to) {
    auto source = store::Store::open(from);
    auto target = store::Store::open(to);
    ASSERT_TRUE(source && target);
    for (const auto& e : entries) {
        auto entry = source->get(e.key);
        ASSERT_TRUE(entry);
        ASSERT_TRUE(target->put(e.fields, entry->bytes, e.provenance));
    }
}

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
    const StoreParts parts = store_parts(store_dir());
    ASSERT_EQ(parts.native.size(), 6u);
    for (const auto& e : parts.native) {
        EXPECT_EQ(e.provenance.build_log.rfind("built from a stored SPIR-V module", 0), 0u)
            << e.fields.kernel_name;
    }
    EXPECT_EQ(parts.spirv.size(), 6u);  // warm keeps its own copy, for a pack exported from it

    const auto second = kcache({"warm", "--kernels", "dot", "--json", "--quiet"}, env);
    ASSERT_EQ(second.code, 0) << second.out << second.err;
    EXPECT_EQ(second.json()["built"], 0) << second.out;
    EXPECT_EQ(second.json()["already_cached"], 6) << second.out;
    EXPECT_EQ(second.json()["spirv"]["already_stored"], 6) << second.out;
}

TEST_F(CliIl, WarmStoresEachVariantsSpirvAndAStoreOfOnlyThoseIsServedThroughTheIlRung) {
    ASSERT_NE(test_device_il_version().find("SPIR-V"), std::string::npos)
        << "the test device reports no SPIR-V: run scripts/il-driver.sh (ctest -L il)";
    const auto first = kcache({"warm", "--kernels", "dot", "--json", "--quiet"});
    ASSERT_EQ(first.code, 0) << first.out << first.err;
    const auto summary = first.json();
    EXPECT_EQ(summary["built"], 6) << first.out;  // half arithmetic: unsupported here
    EXPECT_EQ(summary["spirv"]["stored"], 6) << first.out;
    EXPECT_EQ(summary["spirv"]["failed"], 0) << first.out;
    EXPECT_FALSE(summary["spirv"].contains("skipped")) << first.out;

    // One module per variant warmed, keyed by the extensions the variant
    // requires (none of these: the device has no fp16, so no variant that
    // needs it was warmed); the native binaries were compiled from source.
    StoreParts parts = store_parts(store_dir());
    ASSERT_EQ(parts.spirv.size(), 6u);
    std::set<std::string> kernels;
    for (const auto& e : parts.spirv) {
        EXPECT_EQ(e.fields.target_format, "spirv:1.2:") << e.fields.kernel_name;
        kernels.insert(e.fields.kernel_name);
    }
    EXPECT_EQ(kernels.size(), 6u);
    ASSERT_EQ(parts.native.size(), 6u);
    for (const auto& e : parts.native) {
        EXPECT_EQ(e.provenance.build_log.find("SPIR-V"), std::string::npos) << e.fields.kernel_name;
    }

    const auto again = kcache({"warm", "--kernels", "dot"});
    ASSERT_EQ(again.code, 0) << again.out << again.err;
    EXPECT_NE(again.out.find("spir-v: 0 stored, 6 already stored, 0 failed (for the 1 device "
                             "that loads IL)"),
              std::string::npos)
        << again.out;
    const auto verified = kcache({"verify"});  // a store holding SPIR-V is sound
    EXPECT_EQ(verified.code, 0) << verified.out << verified.err;

    // Another process, on a store that holds only those modules: each
    // request is built from its module through the IL rung, and stored.
    const auto only = dir() / "spirv-only";
    ASSERT_NO_FATAL_FAILURE(copy_entries(store_dir(), parts.spirv, only));
    const std::vector<std::string> env = {"KCACHE_DIR=" + only.string()};
    const auto served = kcache({"warm", "--kernels", "dot", "--json", "--quiet"}, env);
    ASSERT_EQ(served.code, 0) << served.out << served.err;
    EXPECT_EQ(served.json()["built"], 6) << served.out;
    EXPECT_EQ(served.json()["spirv"]["already_stored"], 6) << served.out;
    parts = store_parts(only);
    ASSERT_EQ(parts.native.size(), 6u);
    for (const auto& e : parts.native) {
        EXPECT_EQ(e.provenance.build_log.rfind("built from a stored SPIR-V module", 0), 0u)
            << e.fields.kernel_name << ": " << e.provenance.build_log;
    }
}

TEST_F(CliIl, WithoutTheSpirvToolsWarmStoresTheNativeBinariesAndSaysSpirvWasSkipped) {
    ASSERT_NE(test_device_il_version().find("SPIR-V"), std::string::npos)
        << "the test device reports no SPIR-V: run scripts/il-driver.sh (ctest -L il)";
    const std::string clang = (dir() / "no-clang-14").string();
    const auto r =
        kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--quiet", "--clang", clang});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("warm: 2 built, 0 already cached"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("spir-v: skipped for the 1 device that loads IL: the SPIR-V tools are "
                         "unusable: "),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find(clang), std::string::npos) << "names the tool: " << r.out;
    const StoreParts parts = store_parts(store_dir());
    EXPECT_EQ(parts.native.size(), 2u);
    EXPECT_EQ(parts.spirv.size(), 0u);
}

}  // namespace
}  // namespace kcache::test
