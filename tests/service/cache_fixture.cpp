#include "cache_fixture.hpp"

#include "test_platform.hpp"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <vector>

namespace kcache::test {

cl_platform_id CacheTest::platform_ = nullptr;
cl_device_id CacheTest::device_ = nullptr;
cl_context CacheTest::context_ = nullptr;

void CacheTest::SetUpTestSuite() {
    use_private_pocl_cache();
    platform_ = find_test_platform();
    ASSERT_NE(platform_, nullptr) << "no OpenCL platform named " << test_platform_name();
    ASSERT_EQ(clGetDeviceIDs(platform_, CL_DEVICE_TYPE_ALL, 1, &device_, nullptr), CL_SUCCESS);
    cl_int err = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    ASSERT_EQ(err, CL_SUCCESS);
}

void CacheTest::TearDownTestSuite() {
    if (context_ != nullptr) {
        clReleaseContext(context_);
        context_ = nullptr;
    }
}

void CacheTest::SetUp() {
    TempDirTest::SetUp();
    ASSERT_NE(context_, nullptr);
}

Config CacheTest::config(const std::string& name) const {
    Config c;
    c.dir = dir() / name;
    c.jit_helper = jit_helper_path();
    c.jit_timeout = std::chrono::milliseconds(60'000);
    c.canary = CanaryPolicy::off;  // the driver canary has tests of its own
    return c;
}

std::unique_ptr<Cache> CacheTest::open(const std::string& name) const {
    return open(config(name));
}

std::unique_ptr<Cache> CacheTest::open(const Config& config) const {
    Outcome o;
    auto cache = Cache::open(config, &o);
    EXPECT_NE(cache, nullptr) << o.message;
    return cache;
}

std::vector<std::uint8_t> tgllp_binary(const std::filesystem::path& dir, const std::string& source,
                                       const std::string& options) {
    const auto work = dir / "ocloc-tgllp";
    std::filesystem::create_directories(work);
    std::ofstream(work / "k.cl") << source;
    const std::string cmd = "ocloc compile -q -file '" + (work / "k.cl").string() +
                            "' -device tgllp -output foreign -out_dir '" + work.string() + "'" +
                            (options.empty() ? "" : " -options '" + options + "'") +
                            " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) {
        return {};
    }
    for (const auto& e : std::filesystem::directory_iterator(work)) {
        if (e.path().extension() == ".bin") {
            std::ifstream in(e.path(), std::ios::binary);
            return std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {});
        }
    }
    return {};
}

std::string scale_source(int salt) {
    return "__kernel void scale(__global const float* in, __global float* out, float k) {\n"
           "    size_t i = get_global_id(0);\n"
           "    out[i] = in[i] * k + " +
           std::to_string(salt) + ".0f;\n}\n";
}

SourceRequest scale_request(int salt) {
    SourceRequest r;
    r.name = "scale";
    r.source = scale_source(salt);
    r.entry_points = {"scale"};
    return r;
}

float run_scale(cl_context context, cl_device_id device, cl_program program, float k) {
    const std::size_t n = 64;
    std::vector<float> in(n, 2.0f), out(n, 0.0f);
    cl_int err = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program, "scale", &err);
    if (err != CL_SUCCESS) {
        return std::nanf("");
    }
    cl_command_queue q = clCreateCommandQueueWithProperties(context, device, nullptr, &err);
    cl_mem a =
        clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * 4, in.data(), &err);
    cl_mem b = clCreateBuffer(context, CL_MEM_WRITE_ONLY, n * 4, nullptr, &err);
    clSetKernelArg(kernel, 0, sizeof(a), &a);
    clSetKernelArg(kernel, 1, sizeof(b), &b);
    clSetKernelArg(kernel, 2, sizeof(k), &k);
    err = clEnqueueNDRangeKernel(q, kernel, 1, nullptr, &n, nullptr, 0, nullptr, nullptr);
    if (err == CL_SUCCESS) {  // blocking read: nothing is looked at before it completes
        err = clEnqueueReadBuffer(q, b, CL_TRUE, 0, n * 4, out.data(), 0, nullptr, nullptr);
    }
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseCommandQueue(q);
    clReleaseKernel(kernel);
    return err == CL_SUCCESS ? out[n - 1] : std::nanf("");
}

bool missed_with(const Outcome& o, Rung rung, MissCause cause, const std::string& text) {
    for (const auto& m : o.misses) {
        if (m.rung == rung && m.cause == cause && m.detail.find(text) != std::string::npos) {
            return true;
        }
    }
    return false;
}

void write_user_config(const std::filesystem::path& dir, const std::string& text) {
    std::filesystem::create_directories(dir / "xdg" / "kcache");
    std::ofstream(dir / "xdg" / "kcache" / "config") << text;
}

void expect_each_refused_naming_its_variable(
    std::initializer_list<std::pair<const char*, const char*>> settings) {
    for (const auto& [var, value] : settings) {
        ::setenv(var, value, 1);
        Config c;
        std::string err;
        EXPECT_FALSE(load_config(c, err)) << var << "=" << value;
        EXPECT_NE(err.find(var), std::string::npos) << err;
        ::unsetenv(var);
    }
}

}  // namespace kcache::test
