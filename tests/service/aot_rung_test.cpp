// Rung 3 of the ladder (AOT binary for the device's target) on PoCL, with real
// binaries: the device is given a target through a device-database override
// file that names it (a record by CL_DEVICE_NAME, as a site would write for a
// device that reports no PCI id), and a pack holds the binaries for that target.

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "cache_fixture.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/service/keys.hpp"
#include "kcache/store/pack.hpp"
#include "registry_input.hpp"

namespace kcache::test {
namespace {

constexpr const char* kTarget = "site-pocl-host";

class AotRung : public CacheTest {
  protected:
    void SetUp() override {
        CacheTest::SetUp();
        auto id = device_db::probe(device_);
        ASSERT_TRUE(id);
        identity_ = *id;
        char vendor[16];
        std::snprintf(vendor, sizeof vendor, "0x%x", id->vendor_id);
        devdb_ = dir() / "site-devices.json";
        std::ofstream(devdb_) << R"({"schema": 1,
 "families": [{"name": "site-cpu", "codename": "Site CPU", "generation": "cpu",
   "architecture": "host", "ip_version": "0.0.1", "ocloc_target": ")"
                              << kTarget << R"(", "ocloc": "unsupported",
   "kind": "integrated", "aot_default": false}],
 "devices": [{"vendor": ")" << vendor
                              << R"(", "name": ")" << id->name
                              << R"(", "product": "PoCL host", "family": "site-cpu"}]})";
    }

    // A pack holding `bytes` as the AOT binary of `kernel` for kTarget, with
    // `coverage` as its coverage table.
    std::filesystem::path aot_pack(const std::string& name, const std::string& kernel,
                                   const store::Bytes& bytes,
                                   const std::vector<store::AotCoverage>& coverage = {}) {
        auto st = store::Store::open(dir() / (name + "-builder"));
        EXPECT_TRUE(st);
        store::Provenance prov;
        prov.origin = store::Origin::aot;
        EXPECT_TRUE(st->put(service::aot_key_fields(kTarget, registry_input(kernel)), bytes, prov));
        auto path = dir() / (name + ".kcpack");
        auto exported = st->export_pack(path);
        EXPECT_TRUE(exported && *exported == 1u);
        if (!coverage.empty()) {
            EXPECT_TRUE(store::write_aot_coverage(path, coverage));
        }
        return path;
    }

    // The PoCL binary of `kernel`, built by the helper into a separate store.
    store::Bytes pocl_binary(const std::string& kernel) {
        auto builder = open("jit-builder");
        auto b = builder->binary(context_, device_, KernelRequest{kernel, {}, {}, Mode::blocking});
        EXPECT_EQ(b.outcome.status, StatusCode::ok) << b.outcome.message;
        return store::Bytes(b.bytes.begin(), b.bytes.end());
    }

    // A cache on `pack` that knows the device through the site's device data,
    // named by the Config alone (KCACHE_DEVICE_DB stays unset).
    std::unique_ptr<Cache> open_with(const std::filesystem::path& pack) {
        auto c = config();
        c.device_db = devdb_;
        c.packs = {pack};
        Outcome o;
        auto cache = Cache::open(c, &o);
        EXPECT_TRUE(cache) << o.message;
        return cache;
    }

    device_db::DeviceIdentity identity_;
    std::filesystem::path devdb_;
};

TEST_F(AotRung, DeviceWithoutATargetSkipsTheRung) {
    auto cache = open();  // no override: PoCL's CPU device has no AOT target
    auto p = cache->program(context_, device_, KernelRequest{"dot", {}, {}, Mode::fail_fast});
    EXPECT_EQ(p.outcome().status, StatusCode::not_cached);
    EXPECT_TRUE(missed_with(p.outcome(), Rung::aot, MissCause::no_aot_target));
}

TEST_F(AotRung, PackBinaryForTheTargetLoadsAndIsPromoted) {
    auto pack = aot_pack("aot", "dot", pocl_binary("dot"));
    auto cache = open_with(pack);
    ASSERT_TRUE(cache);
    auto p = cache->program(context_, device_, KernelRequest{"dot", {}, {}, Mode::fail_fast});
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::aot);
    EXPECT_TRUE(missed_with(p.outcome(), Rung::user_store, MissCause::not_found));
    EXPECT_TRUE(
        missed_with(p.outcome(), Rung::pack, MissCause::not_found));  // no exact entry there
    EXPECT_EQ(cache->stats().aot_hits, 1u);
    EXPECT_EQ(cache->stats().jit_compiles, 0u);

    // Promoted: the user store now holds it under the device's exact key.
    auto in = registry_input("dot");
    auto st = store::Store::open(dir() / "store");
    ASSERT_TRUE(st);
    auto promoted = st->get(device_db::jit_key_fields(identity_, in));
    ASSERT_TRUE(promoted) << store::to_string(promoted.error().reason);
    EXPECT_EQ(promoted->info.provenance.origin, store::Origin::aot);
    EXPECT_EQ(p.outcome().key, promoted->info.key.hex());

    auto next = open_with(pack);  // a later process: the exact entry answers
    auto q = next->program(context_, device_, KernelRequest{"dot", {}, {}, Mode::fail_fast});
    ASSERT_TRUE(q.ok()) << q.outcome().message;
    EXPECT_EQ(q.outcome().rung, Rung::user_store);
}

TEST_F(AotRung, RejectedPackBinaryIsRecordedThenJit) {
    const auto in = registry_input("dot");
    auto foreign = tgllp_binary(dir(), in.source, in.options);
    ASSERT_FALSE(foreign.empty()) << "ocloc did not produce a tgllp binary";
    auto cache = open_with(aot_pack("foreign", "dot", foreign));
    ASSERT_TRUE(cache);
    auto p = cache->program(context_, device_, KernelRequest{"dot", {}, {}, Mode::blocking});
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::jit);
    EXPECT_TRUE(missed_with(p.outcome(), Rung::aot, MissCause::rejected_by_driver,
                            "driver rejected the AOT binary"));
    EXPECT_EQ(cache->stats().jit_compiles, 1u);

    auto st = store::Store::open(dir() / "store");
    ASSERT_TRUE(st);
    auto exact = device_db::jit_key_fields(identity_, registry_input("dot"));
    auto rec = st->find_fresh_failure(store::make_key(exact));
    ASSERT_TRUE(rec && *rec);
    EXPECT_EQ((*rec)->kind, store::FailureKind::rejected_binary);
    auto entry = st->get(exact);
    ASSERT_TRUE(entry);
    EXPECT_EQ(entry->info.provenance.origin, store::Origin::jit);
}

TEST_F(AotRung, RecordedCoverageGapMeansJitWithoutSearching) {
    // The pack even holds a good binary, but its prebuild recorded that it could
    // not target this device: the ladder believes the record and goes on at once.
    auto pack = aot_pack("gap", "dot", pocl_binary("dot"),
                         {{"site-cpu",
                           kTarget,
                           store::CoverageStatus::not_targetable,
                           {},
                           "ocloc",
                           "the installed ocloc cannot target it"}});
    auto cache = open_with(pack);
    ASSERT_TRUE(cache);
    auto p = cache->program(context_, device_, KernelRequest{"dot", {}, {}, Mode::fail_fast});
    EXPECT_EQ(p.outcome().status, StatusCode::not_cached);
    EXPECT_TRUE(missed_with(p.outcome(), Rung::aot, MissCause::target_not_covered,
                            "records target " + std::string(kTarget) +
                                " as not_targetable: the installed ocloc cannot target it"))
        << (p.outcome().misses.empty() ? "" : p.outcome().misses.back().detail);
    EXPECT_EQ(cache->stats().aot_hits, 0u);
}

}  // namespace
}  // namespace kcache::test
