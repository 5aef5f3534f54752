// The CLI's load check on PoCL: a stored binary whose checksum is sound but
// whose bytes the driver cannot load (a truncated PoCL binary: PoCL asserts
// and aborts the process that loads it; random bytes) is loaded only in the
// kcache-verify helper. `verify`, `verify --pack` and `import` report it as
// bad, exit 1 and never die of the driver's signal; import does not import it.

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "cli_runner.hpp"
#include "kcache/store/store.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

using nlohmann::json;

class CliLoadCheck : public CliTest {
  protected:
    // Warms four dot variants, then stores under the key of one of them a
    // truncated copy of its binary and under another random bytes, each with
    // its checksum computed by the store as for any put. Returns the two
    // variant ids {truncated, random}.
    std::pair<std::string, std::string> store_damaged_binaries() {
        const CliRun warm = kcache({"warm", "--kernels", "dot", "--dtypes", "f32,f16", "--json"});
        EXPECT_EQ(warm.code, 0) << warm.out << warm.err;
        auto store = ks::Store::open(store_dir());
        EXPECT_TRUE(store.ok());
        auto listed = store->list();
        EXPECT_TRUE(listed.ok());
        EXPECT_EQ(listed->size(), 4u);
        std::vector<std::string> damaged;
        std::mt19937_64 random(7);
        for (std::size_t i = 0; i < 2 && i < listed->size(); ++i) {
            const ks::EntryInfo& info = (*listed)[i];
            auto entry = store->get(info.key);
            EXPECT_TRUE(entry.ok()) << info.fields.kernel_name;
            ks::Bytes bytes = entry->bytes;
            if (i == 0) {
                bytes.resize(bytes.size() / 2);
            } else {
                for (auto& b : bytes) {
                    b = static_cast<std::uint8_t>(random());
                }
            }
            EXPECT_TRUE(store->remove(info.key).ok());
            auto put = store->put(info.fields, bytes, test_provenance());
            EXPECT_TRUE(put.ok());
            EXPECT_EQ(put->key, info.key);
            damaged.push_back(info.fields.kernel_name);
        }
        return {damaged.at(0), damaged.at(1)};
    }
};

TEST_F(CliLoadCheck, VerifyReportsABinaryTheDriverCannotLoadAndRecordsIt) {
    const auto [truncated, random] = store_damaged_binaries();
    const CliRun verify = kcache({"verify", "--json"});
    ASSERT_EQ(verify.code, 1) << "exit code (-1: killed by a signal)\n" << verify.out << verify.err;
    std::map<std::string, json> results;
    for (const json& e : verify.json()) {
        results[e["kernel"]] = e;
    }
    ASSERT_EQ(results.size(), 4u) << verify.out;
    EXPECT_EQ(results[truncated]["state"], "load_failed") << verify.out;
    EXPECT_EQ(results[random]["state"], "load_failed") << verify.out;
    EXPECT_NE(results[truncated].value("detail", "").find("signal"), std::string::npos)
        << "PoCL aborts on a truncated binary: " << verify.out;
    for (const auto& [id, e] : results) {
        if (id != truncated && id != random) {
            EXPECT_EQ(e["state"], "ok") << e.dump();
            EXPECT_FALSE(e.contains("detail")) << "a sound binary was not loaded: " << e.dump();
        }
    }
    std::set<std::string> failed;
    for (const json& e : kcache({"ls", "--json", "--verified", "failed"}).json()) {
        failed.insert(e["kernel"].get<std::string>());
    }
    EXPECT_EQ(failed, (std::set<std::string>{truncated, random}));

    const CliRun text = kcache({"verify"});
    EXPECT_EQ(text.code, 1) << text.out << text.err;
    EXPECT_NE(text.out.find("checked 4 entries, 2 need attention"), std::string::npos) << text.out;
}

TEST_F(CliLoadCheck, VerifyPackAndImportRefuseABinaryTheDriverCannotLoad) {
    store_damaged_binaries();
    const auto pack = dir() / "damaged.kcpack";
    const CliRun exported = kcache({"export", pack.string()});
    ASSERT_EQ(exported.code, 0) << exported.out << exported.err;

    const CliRun verify = kcache({"verify", "--pack", pack.string(), "--json"});
    EXPECT_EQ(verify.code, 1) << "exit code (-1: killed by a signal)\n" << verify.out << verify.err;
    EXPECT_EQ(verify.json()["ok"], 2) << verify.out;
    EXPECT_EQ(verify.json()["load_failed"], 2) << verify.out;
    EXPECT_EQ(verify.json()["corrupt"], 0) << verify.out;
    const CliRun text = kcache({"verify", "--pack", pack.string()});
    EXPECT_EQ(text.code, 1) << text.out << text.err;
    EXPECT_NE(text.out.find("2 ok, 0 corrupt, 2 the driver cannot load"), std::string::npos)
        << text.out;

    const std::vector<std::string> other = {"KCACHE_DIR=" + (dir() / "other").string()};
    const CliRun imported = kcache({"import", pack.string(), "--json"}, other);
    EXPECT_EQ(imported.code, 1) << "exit code (-1: killed by a signal)\n"
                                << imported.out << imported.err;
    EXPECT_EQ(imported.json()["imported"], 2) << imported.out;
    EXPECT_EQ(imported.json()["load_failed"], 2) << imported.out;
    EXPECT_NE(imported.err.find("skipping dot:"), std::string::npos) << imported.err;
    EXPECT_EQ(kcache({"ls", "--json"}, other).json().size(), 2u);
    const CliRun reverify = kcache({"verify", "--json"}, other);
    EXPECT_EQ(reverify.code, 0) << reverify.out << reverify.err;
}

}  // namespace
}  // namespace kcache::test
