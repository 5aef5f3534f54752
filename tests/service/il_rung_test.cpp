// The ladder's IL rung on the SPIR-V PoCL (label il: scripts/il-driver.sh
// builds it, the loader is offered it alone): a pack that holds only SPIR-V
// for a kernel serves it through the helper, the native binary it produced
// answers the next cache from the user store, and a module the device cannot
// take is a recorded miss before the compile from source.

#include <gtest/gtest.h>

#include "cache_fixture.hpp"
#include "il_support.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/service/keys.hpp"
#include "kcache/store/pack.hpp"
#include "registry_input.hpp"

namespace kcache::test {
namespace {

class IlRung : public CacheTest {
  protected:
    void SetUp() override {
        CacheTest::SetUp();
        ASSERT_NE(test_device_il_version().find("SPIR-V"), std::string::npos)
            << "the test device reports no SPIR-V: run scripts/il-driver.sh (ctest -L il "
               "offers its driver to the loader)";
        auto id = device_db::probe(device_);
        ASSERT_TRUE(id);
        identity_ = *id;
    }

    // A pack holding `spirv` as the SPIR-V entry of `input`, and nothing else.
    std::filesystem::path il_pack(const std::string& name, const device_db::CompileInput& input,
                                  const std::string& spirv) {
        auto st = store::Store::open(dir() / (name + "-builder"));
        EXPECT_TRUE(st);
        store::Provenance prov;
        prov.origin = store::Origin::aot;
        const auto* data = reinterpret_cast<const std::uint8_t*>(spirv.data());
        EXPECT_TRUE(st->put(service::il_key_fields(service::il_target(input), input),
                            store::Bytes(data, data + spirv.size()), prov));
        auto path = dir() / (name + ".kcpack");
        auto exported = st->export_pack(path);
        EXPECT_TRUE(exported && *exported == 1u);
        return path;
    }

    // A cache on the test's store with `pack` as its only pack.
    std::unique_ptr<Cache> open_with(const std::filesystem::path& pack) {
        auto c = config();
        c.packs = {pack};
        return open(c);
    }

    device_db::DeviceIdentity identity_;
};

// Every miss of `o`, one a line, for failure messages.
std::string misses_of(const Outcome& o) {
    std::string s;
    for (const RungMiss& m : o.misses) {
        s += "\n  " + m.detail;
    }
    return s;
}

TEST_F(IlRung, APackWithOnlySpirvServesItAndTheNextCacheHitsTheNativeEntry) {
    const auto in = registry_input("dot");
    const auto pack = il_pack("il", in, spirv_of(in.source, {}, in.options));
    auto cache = open_with(pack);
    ASSERT_TRUE(cache);
    auto p = cache->program(context_, device_, KernelRequest{"dot", {}, {}, Mode::blocking});
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::jit);
    EXPECT_TRUE(missed_with(p.outcome(), Rung::pack, MissCause::not_found));
    // One build, counted once: in il_builds, not also as a compile from source.
    EXPECT_EQ(cache->stats().il_builds, 1u) << misses_of(p.outcome());
    EXPECT_EQ(cache->stats().jit_compiles, 0u);
    EXPECT_EQ(cache->stats().jit_failures, 0u);

    // The native binary is stored under the device's exact key, from SPIR-V.
    auto st = store::Store::open(dir() / "store");
    ASSERT_TRUE(st);
    auto native = st->get(device_db::jit_key_fields(identity_, in));
    ASSERT_TRUE(native) << store::to_string(native.error().reason);
    EXPECT_NE(native->info.provenance.build_log.find("SPIR-V"), std::string::npos);
    EXPECT_NE(native->bytes.size(), 0u);

    auto next = open_with(pack);  // a later cache: the exact entry answers, no build
    auto q = next->program(context_, device_, KernelRequest{"dot", {}, {}, Mode::fail_fast});
    ASSERT_TRUE(q.ok()) << q.outcome().message;
    EXPECT_EQ(q.outcome().rung, Rung::user_store);
    EXPECT_EQ(next->stats().il_builds, 0u);
}

TEST_F(IlRung, WithoutASpirvEntryTheRungSaysSoAndTheSourceIsCompiled) {
    auto cache = open();
    auto p = cache->program(context_, device_, KernelRequest{"dot", {}, {}, Mode::blocking});
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    EXPECT_TRUE(missed_with(p.outcome(), Rung::jit, MissCause::not_found,
                            "SPIR-V: no entry of SPIR-V 1.2"));
    EXPECT_EQ(cache->stats().il_builds, 0u);
    EXPECT_EQ(cache->stats().jit_compiles, 1u);
}

TEST_F(IlRung, AModuleForAnExtensionSetTheDeviceLacksIsARecordedMissThenSource) {
    ASSERT_FALSE(identity_.has_extension("cl_khr_fp16")) << "the test needs a device without fp16";
    SourceRequest req;
    req.name = "hfma";
    req.source = half_fma_source();
    req.entry_points = {"hfma"};
    const device_db::CompileInput in{req.name, req.source, req.options, req.entry_points};
    // Stored as a module for no extensions, but compiled with cl_khr_fp16:
    // it calls half-precision built-ins the device's library does not have.
    auto cache = open_with(il_pack("fp16", in, spirv_of(in.source, {"cl_khr_fp16"})));
    ASSERT_TRUE(cache);
    auto p = cache->program(context_, device_, req);
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::jit);
    EXPECT_TRUE(missed_with(p.outcome(), Rung::jit, MissCause::rejected_by_driver,
                            "SPIR-V: the driver refused the module"))
        << "the driver's reason is in the miss";
    // Two helper builds, each counted once: the module's, refused (a failure,
    // no il_build), then the source's (a compile).
    EXPECT_EQ(cache->stats().il_builds, 0u);
    EXPECT_EQ(cache->stats().jit_compiles, 1u) << misses_of(p.outcome());
    EXPECT_EQ(cache->stats().jit_failures, 1u);
    EXPECT_TRUE(
        missed_with(p.outcome(), Rung::jit, MissCause::rejected_by_driver, "clBuildProgram"))
        << misses_of(p.outcome());

    // The native binary from source answers the next cache on this store.
    auto next = open_with(dir() / "fp16.kcpack");
    auto q = next->program(context_, device_, req);
    ASSERT_TRUE(q.ok()) << q.outcome().message;
    EXPECT_EQ(q.outcome().rung, Rung::user_store);
}

TEST_F(IlRung, AnEntryForAnExtensionTheDeviceLacksIsRefusedWithTheMissingName) {
    ASSERT_FALSE(identity_.has_extension("cl_khr_fp16")) << "the test needs a device without fp16";
    // The registry's half-arithmetic dot, asked for as a caller's source:
    // its SPIR-V is keyed by cl_khr_fp16, which this device lacks.
    auto v = kernels::parse_variant("dot:dtype=f16,arith=f16");
    ASSERT_TRUE(v);
    auto r = kernels::render(*v);
    ASSERT_TRUE(r);
    SourceRequest req;
    req.name = v->id();
    req.source = r->source;
    req.options = r->options;
    req.entry_points = r->entry_points;
    const device_db::CompileInput in{req.name, req.source, req.options, req.entry_points};
    ASSERT_EQ(service::il_target(in).extensions, std::vector<std::string>{"cl_khr_fp16"});
    auto cache = open_with(il_pack("f16", in, spirv_of(in.source, {"cl_khr_fp16"}, in.options)));
    ASSERT_TRUE(cache);
    auto p = cache->program(context_, device_, req);
    EXPECT_TRUE(
        missed_with(p.outcome(), Rung::jit, MissCause::skipped, "the device lacks cl_khr_fp16"))
        << misses_of(p.outcome());
    EXPECT_EQ(cache->stats().il_builds, 0u);
}

}  // namespace
}  // namespace kcache::test
