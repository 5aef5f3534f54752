#include "kat.hpp"

#include <cmath>

#include "kcache/kernels/launch.hpp"
#include "kcache/kernels/reference.hpp"
#include "kcache/kernels/registry.hpp"

namespace kcache::cli {
namespace {

namespace cl = compiler::cl;

constexpr std::size_t kDotN = 1000;
constexpr std::size_t kDotBatch = 2;

// Deterministic inputs in [-1, 1], representable in `dtype`.
std::vector<float> inputs(kernels::DType dtype, std::size_t count, std::uint32_t seed) {
    std::vector<float> v(count);
    for (std::size_t i = 0; i < count; ++i) {
        seed = seed * 1664525u + 1013904223u;
        v[i] = kernels::round_to(dtype, static_cast<float>(seed >> 8) / 8388608.0f - 1.0f);
    }
    return v;
}

// Why an OpenCL step failed, or empty.
struct Launcher {
    const OpenedDevice& dev;
    cl::Queue queue;
    std::string error;

    cl::Mem buffer(std::span<const std::uint8_t> bytes, std::size_t size) {
        cl_int err = CL_SUCCESS;
        const cl_mem_flags flags = CL_MEM_READ_WRITE | (bytes.empty() ? 0 : CL_MEM_COPY_HOST_PTR);
        cl::Mem m(clCreateBuffer(dev.context.get(), flags, size,
                                 bytes.empty() ? nullptr : const_cast<std::uint8_t*>(bytes.data()),
                                 &err));
        if (err != CL_SUCCESS) {
            error = "clCreateBuffer: " + std::to_string(err);
        }
        return m;
    }

    void launch(cl_program program, const char* name, const std::vector<cl_mem>& mems,
                std::uint32_t scalar, std::size_t scalar_index, std::array<std::size_t, 2> global,
                std::size_t local) {
        cl_int err = CL_SUCCESS;
        cl::Kernel k(clCreateKernel(program, name, &err));
        for (std::size_t i = 0, m = 0; err == CL_SUCCESS && i <= mems.size(); ++i) {
            err = i == scalar_index ? clSetKernelArg(k.get(), i, sizeof scalar, &scalar)
                                    : clSetKernelArg(k.get(), i, sizeof(cl_mem), &mems[m++]);
        }
        const std::size_t local2[2] = {local, 1};
        if (err == CL_SUCCESS) {
            err = clEnqueueNDRangeKernel(queue.get(), k.get(), 2, nullptr, global.data(), local2, 0,
                                         nullptr, nullptr);
        }
        if (err != CL_SUCCESS && error.empty()) {
            error = std::string(name) + ": OpenCL error " + std::to_string(err);
        }
    }
};

KatOutcome dot_kat(const OpenedDevice& dev, cl_program program, const kernels::Variant& variant) {
    const auto dtype = kernels::parse_dtype(variant.get("dtype")).value_or(kernels::DType::f32);
    const std::size_t ls = std::stoul(std::string(variant.get("ls")));
    const std::size_t groups = kernels::dot_groups(kDotN, ls);
    const auto x = inputs(dtype, kDotN * kDotBatch, 1);
    const auto y = inputs(dtype, kDotN * kDotBatch, 2);
    cl_int err = CL_SUCCESS;
    Launcher run{
        dev,
        cl::Queue(clCreateCommandQueueWithProperties(dev.context.get(), dev.device, nullptr, &err)),
        err == CL_SUCCESS ? "" : "clCreateCommandQueue failed"};
    const auto xb = kernels::encode(dtype, x);
    const auto yb = kernels::encode(dtype, y);
    const std::size_t out_size = kernels::element_size(dtype) * kDotBatch;
    cl::Mem xm = run.buffer(xb, xb.size()), ym = run.buffer(yb, yb.size());
    cl::Mem partial = run.buffer({}, sizeof(float) * groups * kDotBatch);
    cl::Mem out = run.buffer({}, out_size);
    if (run.error.empty()) {
        run.launch(program, "dot_partial", {xm.get(), ym.get(), partial.get()}, kDotN, 2,
                   {groups * ls, kDotBatch}, ls);
        run.launch(program, "dot_finish", {partial.get(), out.get()},
                   static_cast<std::uint32_t>(groups), 1, {ls, kDotBatch}, ls);
    }
    std::vector<std::uint8_t> got(out_size);
    if (run.error.empty() && clEnqueueReadBuffer(run.queue.get(), out.get(), CL_TRUE, 0, out_size,
                                                 got.data(), 0, nullptr, nullptr) != CL_SUCCESS) {
        run.error = "clEnqueueReadBuffer failed";
    }
    if (!run.error.empty()) {
        return {KatState::failed, run.error};
    }
    const auto values = kernels::decode(dtype, got);
    const auto ref = kernels::dot_reference(x, y, kDotN, kDotBatch);
    const auto tol = kernels::variant_tolerance(variant);
    for (std::size_t b = 0; b < kDotBatch; ++b) {
        if (!tol || !kernels::within(*tol, values[b], ref[b])) {
            return {KatState::failed, "row " + std::to_string(b) + ": got " +
                                          std::to_string(values[b]) + ", expected " +
                                          std::to_string(ref[b].value)};
        }
    }
    return {KatState::passed, "dot: " + std::to_string(kDotBatch) + " rows of " +
                                  std::to_string(kDotN) + " within tolerance"};
}

const OpenedDevice* device_of(const std::vector<OpenedDevice>& devices, const store::KeyFields& f) {
    for (const OpenedDevice& d : devices) {
        if (d.identity.name == f.device_name && d.identity.platform_name == f.platform_name &&
            d.identity.driver_version == f.driver_version) {
            return &d;
        }
    }
    return nullptr;
}

}  // namespace

const char* to_string(KatState s) {
    switch (s) {
        case KatState::passed:
            return "kat_passed";
        case KatState::failed:
            return "kat_failed";
        case KatState::no_kat:
            return "no_kat";
        case KatState::device_absent:
            break;
    }
    return "device_absent";
}

KatOutcome run_kat(const std::vector<OpenedDevice>& devices, const store::Entry& entry) {
    const store::KeyFields& f = entry.info.fields;
    auto variant = kernels::parse_variant(f.kernel_name);
    if (!variant || variant->kernel != "dot") {
        return {KatState::no_kat, "no known-answer test in the CLI for " + f.kernel_name};
    }
    const OpenedDevice* dev = device_of(devices, f);
    if (!dev) {
        return {KatState::device_absent, "device " + f.device_name + " is not present"};
    }
    const unsigned char* bytes = entry.bytes.data();
    const std::size_t size = entry.bytes.size();
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    cl::Program program(clCreateProgramWithBinary(dev->context.get(), 1, &dev->device, &size,
                                                  &bytes, &status, &err));
    if (err != CL_SUCCESS || status != CL_SUCCESS ||
        clBuildProgram(program.get(), 1, &dev->device, f.build_options.c_str(), nullptr, nullptr) !=
            CL_SUCCESS) {
        return {KatState::failed, "the driver rejected the stored binary"};
    }
    return dot_kat(*dev, program.get(), *variant);
}

}  // namespace kcache::cli
