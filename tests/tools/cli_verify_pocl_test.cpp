// `kcache verify --run` on PoCL: the known-answer test of every registry
// kernel passes on the binaries `kcache warm` built, in every variant PoCL
// supports, and fails (recorded on the entry) when an entry holds the binary
// of another variant or kernel, or one built from a stale revision of the
// kernel's source; a binary that never finishes times out in the helper and
// the command goes on.

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "cli_runner.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/store/store.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

using nlohmann::json;

class CliVerify : public CliTest {
  protected:
    // Warms `kernel` (all variants) and returns verify --run's JSON results by
    // variant id, after checking that every entry ran its KAT.
    std::map<std::string, json> warm_and_verify(const std::string& kernel) {
        const CliRun warm = kcache({"warm", "--kernels", kernel, "--jobs", "2", "--json"});
        EXPECT_EQ(warm.code, 0) << warm.out << warm.err;
        EXPECT_EQ(warm.json()["failed"], 0) << warm.out;
        const CliRun verify = kcache({"verify", "--run", "--json"});
        EXPECT_EQ(verify.code, 0) << verify.out << verify.err;
        std::map<std::string, json> by_kernel;
        for (const json& e : verify.json()) {
            EXPECT_EQ(e["state"], "kat_passed") << e.dump();
            by_kernel[e["kernel"]] = e;
        }
        return by_kernel;
    }

    // Returns the variant ids `kcache ls` shows with verification `state`.
    std::set<std::string> verified(const std::string& state) {
        std::set<std::string> ids;
        for (const json& e : kcache({"ls", "--json", "--verified", state}).json()) {
            ids.insert(e["kernel"].get<std::string>());
        }
        return ids;
    }

    // See the definitions below.
    void put_stale_source_binary(const std::string& id);
    void put_edited_binary(const std::string& id, const std::string& find,
                           const std::string& replace, bool warm_up);

    // Ids of every entry in the store.
    std::set<std::string> all_entries() {
        std::set<std::string> ids;
        for (const json& e : kcache({"ls", "--json"}).json()) {
            ids.insert(e["kernel"].get<std::string>());
        }
        return ids;
    }
};

// Asserts that each of `ids` was verified and that its detail names each of `parts`.
void expect_checked(const std::map<std::string, json>& results, const std::vector<std::string>& ids,
                    const std::vector<std::string>& parts) {
    for (const std::string& id : ids) {
        const auto found = results.find(id);
        ASSERT_NE(found, results.end()) << id << " was not verified";
        const std::string detail = found->second.value("detail", "");
        for (const std::string& part : parts) {
            EXPECT_NE(detail.find(part), std::string::npos) << id << ": " << detail;
        }
    }
}

TEST_F(CliVerify, Conv2dPassesBothEntryPointsInEveryDtype) {
    const auto results = warm_and_verify("conv2d");
    EXPECT_EQ(results.size(), 6u);  // f32, f16, bf16 × none, relu
    expect_checked(results,
                   {"conv2d:dtype=f32,act=none,ls=64", "conv2d:dtype=f16,act=relu,ls=64",
                    "conv2d:dtype=bf16,act=none,ls=64", "conv2d:dtype=bf16,act=relu,ls=64"},
                   {"conv2d_direct", "conv2d_pointwise", "max error"});
    EXPECT_EQ(verified("passed"), all_entries());
}

TEST_F(CliVerify, QconvPointwisePassesUnderItsAlias) {
    const auto results = warm_and_verify("qconv2d_pointwise");
    EXPECT_EQ(results.size(), 4u);  // out f32, i8 × none, relu
    expect_checked(
        results,
        {"qconv_pointwise:out=f32,act=none,ls=64", "qconv_pointwise:out=i8,act=relu,ls=64"},
        {"qconv_pointwise", "max error 0"});
    EXPECT_EQ(verified("passed"), all_entries());
}

TEST_F(CliVerify, DotPassesInEveryDtypeAndLocalSize) {
    const auto results = warm_and_verify("dot");
    EXPECT_EQ(results.size(), 6u);  // f32, f16, bf16 × ls 256, 64 (arith=f16: no cl_khr_fp16)
    expect_checked(results,
                   {"dot:dtype=f32,arith=f32,ls=256", "dot:dtype=f16,arith=f32,ls=64",
                    "dot:dtype=bf16,arith=f32,ls=256"},
                   {"dot 3 rows of 1013"});
    EXPECT_EQ(verified("passed"), all_entries());
}

TEST_F(CliVerify, BatchnormPassesInferenceAndTrainingInEveryDtype) {
    const auto results = warm_and_verify("batchnorm");
    EXPECT_EQ(results.size(), 6u);  // f32, f16, bf16 × none, relu
    expect_checked(results,
                   {"batchnorm:dtype=f32,act=none,ls=256", "batchnorm:dtype=f16,act=relu,ls=256",
                    "batchnorm:dtype=bf16,act=relu,ls=256"},
                   {"batchnorm_inference", "batchnorm_stats mean", "batchnorm_stats var",
                    "training batchnorm_inference"});
    EXPECT_EQ(verified("passed"), all_entries());
}

// Replaces the entry of each `{victim, donor}` variant pair by the donor's binary
// under the victim's own key fields, as a wrong build or a bad import could.
void swap_binaries(const std::filesystem::path& store_dir,
                   const std::vector<std::pair<std::string, std::string>>& pairs) {
    auto store = ks::Store::open(store_dir);
    ASSERT_TRUE(store.ok());
    auto listed = store->list();
    ASSERT_TRUE(listed.ok());
    std::map<std::string, ks::Entry> entries;
    for (const ks::EntryInfo& info : *listed) {
        auto entry = store->get(info.key);
        ASSERT_TRUE(entry.ok()) << info.fields.kernel_name;
        entries.emplace(info.fields.kernel_name, std::move(*entry));
    }
    for (const auto& [victim, donor] : pairs) {
        ASSERT_TRUE(entries.count(victim) && entries.count(donor)) << victim << " / " << donor;
        const ks::EntryInfo& info = entries.at(victim).info;
        ASSERT_TRUE(store->remove(info.key).ok());
        auto put = store->put(info.fields, entries.at(donor).bytes, test_provenance());
        ASSERT_TRUE(put.ok());
        EXPECT_EQ(put->key, info.key) << victim;
    }
}

// Puts a copy of the entry of variant `id` as if built from other source text
// (another kcache version's kernel file); returns its key.
ks::Key put_stale_copy(const std::filesystem::path& store_dir, const std::string& id) {
    auto store = ks::Store::open(store_dir);
    EXPECT_TRUE(store.ok());
    auto listed = store->list();
    EXPECT_TRUE(listed.ok());
    for (const ks::EntryInfo& info : *listed) {
        if (info.fields.kernel_name == id) {
            auto entry = store->get(info.key);
            EXPECT_TRUE(entry.ok());
            ks::KeyFields stale = info.fields;
            stale.source_digest = kcache::sha256_hex("// an older dot.cl");
            auto put = store->put(stale, entry->bytes, test_provenance());
            EXPECT_TRUE(put.ok());
            return put->key;
        }
    }
    ADD_FAILURE() << "no entry " << id;
    return {};
}

// Stores under the registry key of variant `id` (already in the store) a
// binary that kcache's own pipeline (`warm --manifest`, JIT on PoCL) built
// from the variant's source with the first `find` replaced by `replace`:
// the entry an older build, an import or a key bug could leave, where the key
// names today's source and the bytes compute something else. `warm_up`
// launches the kernels once before the binary is taken (as warm does).
void CliVerify::put_edited_binary(const std::string& id, const std::string& find,
                                  const std::string& replace, bool warm_up) {
    auto variant = kernels::parse_variant(id);
    ASSERT_TRUE(variant.ok()) << id;
    auto rendered = kernels::render(*variant);
    ASSERT_TRUE(rendered.ok()) << id;
    std::string source = rendered->source;
    const auto at = source.find(find);
    ASSERT_NE(at, std::string::npos) << "the kernel source changed: update the edit of " << id;
    source.replace(at, find.size(), replace);
    std::ofstream(dir() / "edited.cl") << source;
    nlohmann::json kernel{{"name", "edited"},
                          {"sources", {"edited.cl"}},
                          {"options", rendered->options},
                          {"entry_points", rendered->entry_points}};
    if (warm_up) {
        kernel["local_size"] = rendered->local_size;
    }
    std::ofstream(dir() / "edited.json") << nlohmann::json{{"kernels", {kernel}}}.dump();
    const CliRun built = kcache({"warm", "--manifest", (dir() / "edited.json").string(), "--json"});
    ASSERT_EQ(built.code, 0) << built.out << built.err;
    ASSERT_EQ(built.json()["built"], 1) << built.out;

    auto store = ks::Store::open(store_dir());
    ASSERT_TRUE(store.ok());
    auto listed = store->list();
    ASSERT_TRUE(listed.ok());
    std::optional<ks::Entry> edited, current;
    for (const ks::EntryInfo& info : *listed) {
        if (info.fields.kernel_name == id || info.fields.kernel_name.starts_with("edited")) {
            auto entry = store->get(info.key);
            ASSERT_TRUE(entry.ok()) << info.fields.kernel_name;
            (info.fields.kernel_name == id ? current : edited) = std::move(*entry);
        }
    }
    ASSERT_TRUE(edited && current) << "warm did not store both " << id << " and the edit";
    ASSERT_NE(edited->bytes, current->bytes);
    ASSERT_TRUE(store->remove(edited->info.key).ok());
    ASSERT_TRUE(store->remove(current->info.key).ok());
    auto put = store->put(current->info.fields, edited->bytes, test_provenance());
    ASSERT_TRUE(put.ok());
    EXPECT_EQ(put->key, current->info.key);
}

// Stores under the registry key of dot variant `id` a binary built from a
// stale revision of dot.cl: one whose dot_partial strides by one work-group
// instead of all of them, so that a row spanning several work-groups is
// summed more than once.
void CliVerify::put_stale_source_binary(const std::string& id) {
    put_edited_binary(id, "i += groups * KC_LOCAL_SIZE", "i += KC_LOCAL_SIZE", true);
}

TEST_F(CliVerify, ABinaryOfAnotherVariantOrKernelFailsItsKat) {
    const CliRun warm =
        kcache({"warm", "--kernels", "conv2d,dot", "--dtypes", "f32,f16", "--jobs", "2", "--json"});
    ASSERT_EQ(warm.code, 0) << warm.out << warm.err;
    const std::string f32_none = "conv2d:dtype=f32,act=none,ls=64";
    const std::string f32_relu = "conv2d:dtype=f32,act=relu,ls=64";
    const std::string f16_none = "conv2d:dtype=f16,act=none,ls=64";
    swap_binaries(store_dir(), {{f16_none, f32_none},  // wider elements than the buffers hold
                                {f32_none, f32_relu},  // only the fused activation differs
                                {f32_relu, "dot:dtype=f32,arith=f32,ls=256"}});  // another kernel

    const std::string stale_key =
        put_stale_copy(store_dir(), "dot:dtype=f16,arith=f32,ls=64").hex();
    const std::string stale_source = "dot:dtype=f32,arith=f32,ls=64";  // 4 work-groups a row
    put_stale_source_binary(stale_source);

    const CliRun verify = kcache({"verify", "--run", "--json"});
    EXPECT_EQ(verify.code, 1) << verify.out << verify.err;
    std::map<std::string, json> results;
    for (const json& e : verify.json()) {
        if (e["key"] == stale_key) {  // the KAT knows only the registry's current source
            EXPECT_EQ(e["state"], "no_kat") << e.dump();
            EXPECT_NE(e.value("detail", "").find("other source text"), std::string::npos);
            continue;
        }
        results[e["kernel"]] = e;
    }
    for (const std::string& id : {f16_none, f32_none, f32_relu, stale_source}) {
        EXPECT_EQ(results[id]["state"], "kat_failed") << id << ": " << verify.out;
    }
    const std::string wrong_dtype = results[f16_none].value("detail", "");
    EXPECT_NE(wrong_dtype.find("conv2d_direct"), std::string::npos) << wrong_dtype;
    EXPECT_NE(wrong_dtype.find("outside tolerance; first at ["), std::string::npos) << wrong_dtype;
    const std::string wrong_act = results[f32_none].value("detail", "");
    EXPECT_NE(wrong_act.find("got "), std::string::npos) << wrong_act;
    EXPECT_NE(wrong_act.find("expected -"), std::string::npos) << wrong_act;  // ReLU gave 0
    EXPECT_NE(results[f32_relu].value("detail", "").find("clCreateKernel(conv2d_direct)"),
              std::string::npos)
        << verify.out;
    const std::string stale = results[stale_source].value("detail", "");
    EXPECT_NE(stale.find("dot 3 rows of 1013"), std::string::npos) << stale;
    EXPECT_NE(stale.find("outside tolerance; first at ["), std::string::npos) << stale;
    EXPECT_EQ(results["conv2d:dtype=f16,act=relu,ls=64"]["state"], "kat_passed");
    EXPECT_EQ(results["dot:dtype=f32,arith=f32,ls=256"]["state"], "kat_passed");
    EXPECT_EQ(verified("failed"),
              (std::set<std::string>{f16_none, f32_none, f32_relu, stale_source}));
    EXPECT_EQ(verified("passed").size(), 4u);      // conv2d f16 relu, 3 dot
    EXPECT_EQ(verified("unverified").size(), 1u);  // the stale copy

    const CliRun text = kcache({"verify", "--run"});
    EXPECT_EQ(text.code, 1);
    EXPECT_NE(text.out.find("checked 9 entries, 4 need attention"), std::string::npos) << text.out;
}

// A checksum-valid binary whose dot_partial never returns: its known-answer
// test runs in the kcache-verify helper, which is killed at --timeout; the
// entry is recorded as failed and the entries after it are still verified.
TEST_F(CliVerify, ABinaryThatNeverFinishesTimesOutAndVerifyGoesOn) {
    const CliRun warm = kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"});
    ASSERT_EQ(warm.code, 0) << warm.out << warm.err;
    const std::string looping = "dot:dtype=f32,arith=f32,ls=64";
    // No warm-up launch for this one: it would hang the build's helper instead.
    put_edited_binary(looping, "__local float scratch[KC_LOCAL_SIZE];",
                      "__local float scratch[KC_LOCAL_SIZE];\n"
                      "    { volatile int kc_spin = 1; while (kc_spin) { } }",
                      false);
    // Entries stored after the looping one are listed (and verified) after it.
    const CliRun later = kcache({"warm", "--kernels", "batchnorm", "--dtypes", "f32", "--json"});
    ASSERT_EQ(later.code, 0) << later.out << later.err;

    const CliRun verify = kcache({"verify", "--run", "--json", "--timeout", "15s"});
    EXPECT_EQ(verify.code, 1) << verify.out << verify.err;
    std::vector<std::string> order;
    std::map<std::string, json> results;
    for (const json& e : verify.json()) {
        order.push_back(e["kernel"]);
        results[e["kernel"]] = e;
    }
    ASSERT_EQ(results.size(), 4u) << verify.out;  // dot ls 256 and 64, batchnorm none and relu
    EXPECT_EQ(results[looping]["state"], "kat_timeout") << verify.out;
    EXPECT_NE(results[looping].value("detail", "").find("did not finish within 15000 ms"),
              std::string::npos)
        << verify.out;
    for (const auto& [id, e] : results) {
        if (id != looping) {
            EXPECT_EQ(e["state"], "kat_passed") << e.dump();
        }
    }
    EXPECT_NE(order.back(), looping) << "the looping entry was not followed by another";
    EXPECT_EQ(verified("failed"), (std::set<std::string>{looping}));
    EXPECT_EQ(verified("passed").size(), 3u);
}

}  // namespace
}  // namespace kcache::test
