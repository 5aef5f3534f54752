// Registry, alias and rendering tests (no device needed).

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "kcache/kernels/reference.hpp"
#include "kcache/kernels/registry.hpp"

namespace kcache::kernels {
namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(Kernels, EveryVariantRendersWithItsEntryPoints) {
    const auto all = all_variants();
    ASSERT_FALSE(all.empty());
    std::set<std::string> ids;
    for (const Variant& v : all) {
        EXPECT_TRUE(ids.insert(v.id()).second) << "duplicate variant " << v.id();
        auto r = render(v);
        ASSERT_TRUE(r.ok()) << v.id() << ": " << r.error().message;
        EXPECT_FALSE(r->entry_points.empty()) << v.id();
        for (const std::string& entry : r->entry_points) {
            EXPECT_NE(r->source.find("void " + entry + "("), std::string::npos)
                << v.id() << " lacks entry point " << entry;
        }
        EXPECT_EQ(r->options.rfind("-cl-std=CL1.2", 0), 0u) << r->options;
        auto reparsed = parse_variant(v.id());
        ASSERT_TRUE(reparsed.ok()) << v.id();
        EXPECT_EQ(*reparsed, v);
    }
}

TEST(Kernels, RenderedSourceIsPreludePlusTheFileOnDisk) {
    auto r = render(*make_variant("dot"));
    ASSERT_TRUE(r.ok());
    const std::string dir = KCACHE_KERNELS_CL_DIR;
    EXPECT_EQ(r->source, read_file(dir + "/prelude.cl") + read_file(dir + "/dot.cl"));
}

TEST(Kernels, VariantsDifferInOptionsNotSource) {
    auto f32 = render(*make_variant("dot", {{"dtype", "f32"}}));
    auto bf16 = render(*make_variant("dot", {{"dtype", "bf16"}}));
    ASSERT_TRUE(f32.ok() && bf16.ok());
    EXPECT_EQ(f32->source, bf16->source);
    EXPECT_NE(f32->options, bf16->options);
    EXPECT_NE(bf16->options.find("-DKC_BF16"), std::string::npos);
}

TEST(Kernels, DefaultsComeFirstAndLocalSizeIsRendered) {
    auto v = make_variant("dot");
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(v->id(), "dot:dtype=f32,arith=f32,ls=256");
    auto r = render(*v);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->local_size, 256u);
    EXPECT_NE(r->options.find("-DKC_LOCAL_SIZE=256"), std::string::npos);
    EXPECT_EQ(preferred_local_sizes(**find_kernel("dot")), (std::vector<std::size_t>{256, 64}));
}

// An operator rename must not change a lookup or a cached binary: the alias
// yields the canonical variant and byte-identical source, options and entry points.
TEST(Kernels, AliasRendersExactlyLikeTheCanonicalName) {
    EXPECT_EQ(*resolve("qconv2d_pointwise"), "qconv_pointwise");
    EXPECT_EQ(*resolve("qconv_pointwise"), "qconv_pointwise");
    for (const char* params : {"", ":out=i8", ":out=f32,act=relu"}) {
        auto old_name = parse_variant(std::string("qconv2d_pointwise") + params);
        auto new_name = parse_variant(std::string("qconv_pointwise") + params);
        ASSERT_TRUE(old_name.ok() && new_name.ok()) << params;
        EXPECT_EQ(*old_name, *new_name);
        EXPECT_EQ(old_name->kernel, "qconv_pointwise");
        auto a = render(*old_name);
        auto b = render(*new_name);
        ASSERT_TRUE(a.ok() && b.ok());
        EXPECT_EQ(a->source, b->source);
        EXPECT_EQ(a->options, b->options);
        EXPECT_EQ(a->entry_points, b->entry_points);
        EXPECT_EQ(a->entry_points, std::vector<std::string>{"qconv_pointwise"});
    }
}

TEST(Kernels, EveryVariantHasATolerance) {
    for (const Variant& v : all_variants()) {
        auto tol = variant_tolerance(v);
        ASSERT_TRUE(tol.ok()) << v.id();
        if (v.kernel == "qconv_pointwise") {
            // int32 accumulation: no accumulation term; int8 outputs exact.
            EXPECT_EQ(tol->accum_rel, 0.0) << v.id();
            EXPECT_EQ(tol->ulps, v.get("out") == "i8" ? 0.0 : 2.0) << v.id();
        } else {
            EXPECT_EQ(tol->ulps, tolerance(*parse_dtype(v.get("dtype"))).ulps);
            EXPECT_EQ(tol->digits, tolerance(*parse_dtype(v.get("dtype"))).digits);
        }
    }
    const auto native =
        *variant_tolerance(*make_variant("dot", {{"dtype", "f16"}, {"arith", "f16"}}));
    EXPECT_GT(native.accum_rel, tolerance(DType::f16).accum_rel);
}

TEST(Kernels, UnknownNamesAreTypedErrors) {
    EXPECT_EQ(resolve("conv3d").error().code, KernelErrc::unknown_kernel);
    EXPECT_EQ(make_variant("nope").error().code, KernelErrc::unknown_kernel);
    EXPECT_EQ(make_variant("dot", {{"colour", "red"}}).error().code, KernelErrc::unknown_parameter);
    EXPECT_EQ(make_variant("dot", {{"dtype", "f64"}}).error().code, KernelErrc::invalid_value);
    EXPECT_EQ(parse_variant("dot:dtype").error().code, KernelErrc::malformed_variant);
    EXPECT_EQ(parse_variant("dot:dtype=f16,dtype=f32").error().code, KernelErrc::malformed_variant);
    EXPECT_EQ(parse_variant("dot:ls=128").error().code, KernelErrc::invalid_value);
    Variant forged{"dot", {{"dtype", "f32"}}};
    EXPECT_EQ(render(forged).error().code, KernelErrc::invalid_value);
    EXPECT_EQ(embedded_source("missing.cl").error().code, KernelErrc::invalid_value);
}

TEST(Kernels, ConstrainedValueOnlyWithItsPartner) {
    // Native-half arithmetic exists only for f16 elements.
    EXPECT_EQ(make_variant("dot", {{"dtype", "f32"}, {"arith", "f16"}}).error().code,
              KernelErrc::invalid_value);
    EXPECT_TRUE(make_variant("dot", {{"dtype", "f16"}, {"arith", "f16"}}).ok());
    for (const Variant& v : variants(**find_kernel("dot"))) {
        if (v.get("arith") == "f16") {
            EXPECT_EQ(v.get("dtype"), "f16") << v.id();
        }
    }
}

TEST(Kernels, MissingExtensionIsReportedUnsupported) {
    auto v = make_variant("dot", {{"dtype", "f16"}, {"arith", "f16"}});
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(render(*v)->required_extensions, std::vector<std::string>{"cl_khr_fp16"});
    const std::vector<std::string> without{"cl_khr_byte_addressable_store"};
    auto refused = check_support(*v, without);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, KernelErrc::unsupported);
    EXPECT_NE(refused.error().message.find("cl_khr_fp16"), std::string::npos);
    const std::vector<std::string> with{"cl_khr_fp16"};
    EXPECT_TRUE(check_support(*v, with).ok());
    // Storage-only f16 needs nothing beyond core OpenCL 1.2.
    EXPECT_TRUE(check_support(*make_variant("dot", {{"dtype", "f16"}}), without).ok());
}

}  // namespace
}  // namespace kcache::kernels
