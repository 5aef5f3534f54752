// A device's facts (service/src/identities.hpp): made at a root device's
// first request, then answered with no driver query; the key made from
// them is the one jit_key_fields makes.

#include <gtest/gtest.h>

#include "identities.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/store/key.hpp"
#include "test_platform.hpp"

namespace kcache::test {
namespace {

// The OpenCL loader, counting the device queries the facts are made of.
class CountingLoader final : public service::Loader {
  public:
    int identifies = 0, root_checks = 0, platform_queries = 0;

    Result<device_db::DeviceIdentity, service::LoaderError> identify(cl_device_id d) override {
        ++identifies;
        return real_->identify(d);
    }
    bool is_root_device(cl_device_id d) override {
        ++root_checks;
        return real_->is_root_device(d);
    }
    cl_platform_id platform_of(cl_device_id d) override {
        ++platform_queries;
        return real_->platform_of(d);
    }
    bool device_in_context(cl_context c, cl_device_id d, std::string& why) override {
        return real_->device_in_context(c, d, why);
    }
    Result<cl::ProgramHandle, service::LoaderError> load(cl_context c, cl_device_id d,
                                                         std::span<const std::uint8_t> bytes,
                                                         const std::string& options) override {
        return real_->load(c, d, bytes, options);
    }
    Result<std::vector<std::uint8_t>, service::LoaderError> binary_of(cl_program p) override {
        return real_->binary_of(p);
    }
    std::uint32_t context_references(cl_context c) override { return real_->context_references(c); }
    bool counts_programs(cl_context c) override { return real_->counts_programs(c); }
    cl::ContextHandle retain(cl_context c) override { return real_->retain(c); }
    cl_program retain(cl_program p) override { return real_->retain(p); }

    int queries() const { return identifies + root_checks + platform_queries; }

  private:
    std::unique_ptr<service::Loader> real_ = service::opencl_loader();
};

TEST(Identities, ARootDevicesFactsAreMadeOnceAndKeyAsJitKeyFields) {
    cl_device_id device = find_test_device();
    ASSERT_NE(device, nullptr) << "no test device (KCACHE_TEST_PLATFORM)";
    auto db = device_db::DeviceDb::builtin();
    ASSERT_TRUE(db.ok()) << db.error().message;
    CountingLoader loader;
    service::Identities identities(loader);
    service::DeviceData data;  // the built-in data, built at the first facts

    auto first = identities.facts_of(device, data);
    ASSERT_TRUE(first.ok()) << first.error();
    const service::DeviceFacts& facts = **first;
    ASSERT_NE(facts.id, nullptr);
    EXPECT_EQ(facts.platform, loader.platform_of(device));
    EXPECT_EQ(facts.aot_target, service::aot_target(*db, *facts.id));
    EXPECT_EQ(facts.quirks.deny, db->quirks_for(*facts.id).deny);
    EXPECT_EQ(facts.quirks.rules, db->quirks_for(*facts.id).rules);

    const int queries = loader.queries();
    for (int i = 0; i < 3; ++i) {
        auto again = identities.facts_of(device, data);
        ASSERT_TRUE(again.ok());
        EXPECT_EQ(again->get(), first->get()) << "made again";
    }
    EXPECT_EQ(loader.queries(), queries) << "a known root device was asked again";

    // The key from the device's half and the input's is jit_key_fields'.
    const device_db::CompileInput input{
        "k", "kernel void k(global int* a) { a[0] = 1; }", "  -DX=1   -cl-mad-enable ", {"k", "k"}};
    store::KeyFields fields = facts.jit_fields;
    device_db::set_input_fields(fields, input);
    const store::KeyFields whole = device_db::jit_key_fields(*facts.id, input);
    EXPECT_TRUE(fields == whole);
    EXPECT_EQ(store::make_key(fields), store::make_key(whole));
}

// Bytes the runtime refuses are `rejected`; a program without a binary to
// read back is `query_failed`.
TEST(Identities, TheLoadersFailuresCarryTheirCodes) {
    cl_device_id device = find_test_device();
    ASSERT_NE(device, nullptr) << "no test device (KCACHE_TEST_PLATFORM)";
    cl_int err = CL_SUCCESS;
    cl::ContextHandle context(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err));
    ASSERT_EQ(err, CL_SUCCESS);
    auto loader = service::opencl_loader();

    const std::vector<std::uint8_t> garbage(256, 0x5a);
    auto loaded = loader->load(context.get(), device, garbage, "");
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.error().code, service::LoaderErrc::rejected) << loaded.error().message;
    EXPECT_FALSE(loaded.error().message.empty());

    const char* source = "kernel void k(global int* a) { a[0] = 1; }";
    cl::ProgramHandle unbuilt(clCreateProgramWithSource(context.get(), 1, &source, nullptr, &err));
    ASSERT_EQ(err, CL_SUCCESS);
    auto binary = loader->binary_of(unbuilt.get());
    ASSERT_FALSE(binary.ok()) << binary->size() << " bytes of an unbuilt program";
    EXPECT_EQ(binary.error().code, service::LoaderErrc::query_failed) << binary.error().message;
}

}  // namespace
}  // namespace kcache::test
