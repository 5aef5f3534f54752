#include "canary_support.hpp"

#include <gtest/gtest.h>

#include "jit_support.hpp"
#include "kcache/service/service_api.hpp"
#include "test_platform.hpp"

namespace kcache::test {

device_db::DeviceIdentity test_device() {
    auto listed = device_db::list_opencl_devices();
    if (listed) {
        for (const device_db::OpenClDevice& d : listed->devices) {
            if (d.identity.platform_name.find(test_platform_name()) != std::string::npos) {
                return d.identity;
            }
        }
    }
    ADD_FAILURE() << "no device of platform " << test_platform_name();
    return {};
}

void use_fault_layer() {
    ::setenv("OPENCL_LAYERS", KCACHE_FAULT_LAYER, 1);
}

void FaultLayerTest::SetUp() {
    TempDirTest::SetUp();
    use_fault_layer();
}

void FaultLayerContextTest::SetUp() {
    FaultLayerTest::SetUp();
    device_ = find_test_device();
    ASSERT_NE(device_, nullptr) << "no device of platform " << test_platform_name();
    cl_int err = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
}

void FaultLayerContextTest::TearDown() {
    if (context_ != nullptr) {
        clReleaseContext(context_);
    }
    FaultLayerTest::TearDown();
}

Config canary_config(const std::filesystem::path& store, CanaryPolicy policy) {
    Config c;
    c.dir = store;
    c.jit_helper = jit_helper_path();
    c.canary = policy;
    return c;
}

KernelRequest kernel_request(const std::string& kernel, std::map<std::string, std::string> params) {
    KernelRequest r;
    r.kernel = kernel;
    r.params = std::move(params);
    return r;
}

ScopedEnv::ScopedEnv(std::vector<std::string> settings) {
    for (const std::string& s : settings) {
        const std::size_t eq = s.find('=');
        names_.push_back(s.substr(0, eq));
        ::setenv(names_.back().c_str(), s.substr(eq + 1).c_str(), 1);
    }
}

ScopedEnv::~ScopedEnv() {
    for (const std::string& n : names_) {
        ::unsetenv(n.c_str());
    }
}

std::string verify_helper() {
    return KCACHE_VERIFY_HELPER;
}

LogLines::LogLines() {
    set_log_handler([this](LogLevel, std::string_view line) {
        std::lock_guard g(mu_);
        text_ += std::string(line) + "\n";
    });
}

LogLines::~LogLines() {
    set_log_handler({});
}

std::string LogLines::text() {
    std::lock_guard g(mu_);
    return text_;
}

}  // namespace kcache::test
