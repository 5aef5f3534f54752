#include "cl_harness.hpp"
#include "test_platform.hpp"

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "kcache/cl/program.hpp"
#include "temp_dir.hpp"

namespace kcache::test {

std::filesystem::path KernelsCl::cache_dir_;
std::unique_ptr<PoclDevice> KernelsCl::device_;
std::map<std::string, cl::ProgramHandle> KernelsCl::programs_;

namespace {

std::vector<std::string> device_extensions(cl_device_id device) {
    std::size_t size = 0;
    clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, 0, nullptr, &size);
    std::string text(size, '\0');
    clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, size, text.data(), nullptr);
    std::istringstream words(text.c_str());
    std::vector<std::string> out;
    for (std::string w; words >> w;)
        out.push_back(w);
    return out;
}

// Opens the first device of the test platform; nullptr when there is none.
std::unique_ptr<PoclDevice> open_pocl() {
    auto dev = std::make_unique<PoclDevice>();
    dev->device = find_test_device();
    if (dev->device == nullptr) {
        return nullptr;
    }
    cl_int err = CL_SUCCESS;
    dev->context.reset(clCreateContext(nullptr, 1, &dev->device, nullptr, nullptr, &err));
    if (err != CL_SUCCESS)
        return nullptr;
    dev->queue.reset(
        clCreateCommandQueueWithProperties(dev->context.get(), dev->device, nullptr, &err));
    if (err != CL_SUCCESS)
        return nullptr;
    dev->extensions = device_extensions(dev->device);
    return dev;
}

}  // namespace

void KernelsCl::SetUpTestSuite() {
    // Must precede the first OpenCL call: PoCL reads it when it initialises.
    cache_dir_ = make_temp_dir("pocl-cache");
    setenv("POCL_CACHE_DIR", cache_dir_.c_str(), 1);
    device_ = open_pocl();
}

void KernelsCl::TearDownTestSuite() {
    programs_.clear();
    device_.reset();
    std::error_code ec;
    std::filesystem::remove_all(cache_dir_, ec);
}

void KernelsCl::SetUp() {
    ASSERT_NE(device_, nullptr) << "no PoCL OpenCL device (clinfo -l)";
}

PoclDevice& KernelsCl::device() {
    return *device_;
}

cl::ProgramHandle KernelsCl::build(const std::string& source, const std::string& options) {
    const char* text = source.c_str();
    const std::size_t length = source.size();
    cl_int err = CL_SUCCESS;
    cl::ProgramHandle prog(
        clCreateProgramWithSource(device_->context.get(), 1, &text, &length, &err));
    EXPECT_EQ(err, CL_SUCCESS);
    if (err != CL_SUCCESS)
        return nullptr;
    err = clBuildProgram(prog.get(), 1, &device_->device, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
        ADD_FAILURE() << cl::failure("clBuildProgram", err) << " with options '" << options
                      << "':\n"
                      << cl::build_log(prog.get(), device_->device);
        return nullptr;
    }
    return prog;
}

cl_program KernelsCl::program(const std::string& id) {
    auto found = programs_.find(id);
    if (found != programs_.end())
        return found->second.get();
    auto variant = kernels::parse_variant(id);
    EXPECT_TRUE(variant.ok()) << id << ": " << variant.error().message;
    if (!variant)
        return nullptr;
    auto rendered = kernels::render(*variant);
    EXPECT_TRUE(rendered.ok());
    if (!rendered)
        return nullptr;
    cl::ProgramHandle prog = build(rendered->source, rendered->options);
    cl_program raw = prog.get();
    if (raw != nullptr)
        programs_.emplace(id, std::move(prog));
    return raw;
}

std::unique_ptr<cl::DeviceRun> KernelsCl::device_run(const std::string& id) {
    cl_program prog = program(id);
    std::size_t local_size = 1;
    auto variant = kernels::parse_variant(id);
    auto chosen = variant ? cl::variant_local_size(*variant) : fail(variant.error());
    if (chosen) {
        local_size = *chosen;
    } else {
        ADD_FAILURE() << id << ": " << chosen.error().message;
    }
    return std::make_unique<cl::DeviceRun>(device_->context.get(), device_->queue.get(), prog,
                                           local_size);
}

cl::MemHandle KernelsCl::buffer(const std::vector<std::uint8_t>& bytes) {
    cl::MemHandle mem = buffer(bytes.size());
    if (!bytes.empty()) {
        EXPECT_EQ(clEnqueueWriteBuffer(device_->queue.get(), mem.get(), CL_TRUE, 0, bytes.size(),
                                       bytes.data(), 0, nullptr, nullptr),
                  CL_SUCCESS);
    }
    return mem;
}

cl::MemHandle KernelsCl::buffer(std::size_t size) {
    cl_int err = CL_SUCCESS;
    cl::MemHandle mem(clCreateBuffer(device_->context.get(), CL_MEM_READ_WRITE,
                                     size == 0 ? 1 : size, nullptr, &err));
    EXPECT_EQ(err, CL_SUCCESS);
    return mem;
}

std::vector<std::uint8_t> KernelsCl::read(cl_mem mem, std::size_t size) {
    std::vector<std::uint8_t> out(size);
    if (size == 0)
        return out;
    EXPECT_EQ(clEnqueueReadBuffer(device_->queue.get(), mem, CL_TRUE, 0, size, out.data(), 0,
                                  nullptr, nullptr),
              CL_SUCCESS);
    return out;
}

void KernelsCl::run(cl_kernel k, std::vector<std::size_t> global, std::vector<std::size_t> local) {
    ASSERT_EQ(global.size(), local.size());
    cl_event done = nullptr;
    ASSERT_EQ(clEnqueueNDRangeKernel(device_->queue.get(), k, static_cast<cl_uint>(global.size()),
                                     nullptr, global.data(), local.data(), 0, nullptr, &done),
              CL_SUCCESS);
    EXPECT_EQ(clWaitForEvents(1, &done), CL_SUCCESS);
    clReleaseEvent(done);
}

std::vector<float> random_values(kernels::DType dtype, std::size_t count, std::uint32_t seed,
                                 float lo, float hi) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> out(count);
    for (float& v : out)
        v = kernels::round_to(dtype, dist(rng));
    return out;
}

std::string dtype_name(const ::testing::TestParamInfo<kernels::DType>& info) {
    return std::string(kernels::to_string(info.param));
}

void expect_close(kernels::DType dtype, const std::vector<float>& got,
                  const std::vector<kernels::RefValue>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    const kernels::Tolerance tol = kernels::tolerance(dtype);
    int misses = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (kernels::within(tol, got[i], want[i]))
            continue;
        if (++misses <= 5) {
            ADD_FAILURE() << what << " [" << kernels::to_string(dtype) << "] element " << i
                          << ": got " << got[i] << ", want " << want[i].value << " (term magnitude "
                          << want[i].scale << ")";
        }
    }
    EXPECT_EQ(misses, 0) << what << ": " << misses << " of " << got.size() << " out of tolerance";
}

}  // namespace kcache::test
