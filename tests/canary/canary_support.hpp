#pragma once
// What the canary tests share: the test platform's device as the canary sees
// it, the test layer in the environment of every helper, faults set and
// cleared around one run, fixtures that run under the test layer.

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kcache/device_db/identity.hpp"
#include "kcache/opencl.h"
#include "kcache/service/service_api.hpp"
#include "temp_dir.hpp"

namespace kcache::test {

// The first device of the test platform (KCACHE_TEST_PLATFORM, default PoCL)
// as this process sees it; fails the test when there is none.
device_db::DeviceIdentity test_device();

// Puts the test layer in OPENCL_LAYERS (for this process's later OpenCL
// calls and every helper it starts).
void use_fault_layer();

// A test in a temporary directory with the test layer in OPENCL_LAYERS, set
// before the process's first OpenCL call.
class FaultLayerTest : public TempDirTest {
  protected:
    void SetUp() override;
};

// A FaultLayerTest with a context on the first device of the test platform.
class FaultLayerContextTest : public FaultLayerTest {
  protected:
    void SetUp() override;
    void TearDown() override;

    cl_device_id device_ = nullptr;
    cl_context context_ = nullptr;
};

// A Config on the store `store` under the canary policy `policy`, with the
// kcache-jit built here.
Config canary_config(const std::filesystem::path& store, CanaryPolicy policy);

// A request for registry kernel `kernel` with variant parameters `params`.
KernelRequest kernel_request(const std::string& kernel,
                             std::map<std::string, std::string> params = {});

// Sets "NAME=value" settings for its lifetime, then unsets them.
class ScopedEnv {
  public:
    explicit ScopedEnv(std::vector<std::string> settings);
    ~ScopedEnv();
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

  private:
    std::vector<std::string> names_;
};

// The kcache-verify of the build tree.
std::string verify_helper();

// The lines the process logs (kcache::set_log_handler) while it is alive.
class LogLines {
  public:
    LogLines();
    ~LogLines();
    LogLines(const LogLines&) = delete;
    LogLines& operator=(const LogLines&) = delete;
    std::string text();

  private:
    std::mutex mu_;
    std::string text_;
};

}  // namespace kcache::test
