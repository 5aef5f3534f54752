#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "helper.hpp"

namespace kcache::compiler::helper {
namespace {

// Size in bytes of an OpenCL C scalar or vector type name ("float4"); 0 when
// the type is not one the warm-up can fill with zeros (images, structs…).
std::size_t scalar_size(std::string type, cl_uint address_bits) {
    static const std::map<std::string, std::size_t> base = {
        {"char", 1},   {"uchar", 1},     {"bool", 1},     {"short", 2},
        {"ushort", 2}, {"half", 2},      {"int", 4},      {"uint", 4},
        {"float", 4},  {"long", 8},      {"ulong", 8},    {"double", 8},
        {"size_t", 0}, {"ptrdiff_t", 0}, {"intptr_t", 0}, {"uintptr_t", 0}};
    type.erase(std::remove_if(type.begin(), type.end(), ::isspace), type.end());
    std::size_t digits = type.size();
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(type[digits - 1]))) {
        --digits;
    }
    const auto it = base.find(type.substr(0, digits));
    if (it == base.end()) {
        return 0;
    }
    const std::size_t one = it->second ? it->second : address_bits / 8;
    const int lanes = digits == type.size() ? 1 : std::stoi(type.substr(digits));
    return one * static_cast<std::size_t>(lanes == 3 ? 4 : lanes);
}

std::string arg_type_name(cl_kernel k, cl_uint i) {
    std::size_t n = 0;
    if (clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, 0, nullptr, &n) != CL_SUCCESS) {
        return {};
    }
    std::string s(n, '\0');
    clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, n, s.data(), nullptr);
    return s.substr(0, s.find('\0'));
}

// Keeps the dummy buffers of one launch alive until it finished.
struct LaunchArgs {
    std::vector<cl::MemHandle> buffers;
};

Result<Ok, std::string> set_args(cl_context ctx, cl_device_id dev, cl_kernel k,
                                 const WarmupLaunch& w, LaunchArgs& keep) {
    cl_uint nargs = 0;
    clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, nullptr);
    cl_uint address_bits = 64;
    clGetDeviceInfo(dev, CL_DEVICE_ADDRESS_BITS, sizeof address_bits, &address_bits, nullptr);
    cl_ulong local_mem = 0;
    clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local_mem, &local_mem, nullptr);
    const std::size_t local_bytes =
        std::min<std::size_t>(w.buffer_bytes, local_mem / std::max<cl_uint>(nargs, 1));
    for (cl_uint i = 0; i < nargs; ++i) {
        cl_kernel_arg_address_qualifier q = 0;
        if (cl_int e =
                clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, nullptr)) {
            return fail(cl_failure("clGetKernelArgInfo", e));
        }
        cl_int e = CL_SUCCESS;
        if (q == CL_KERNEL_ARG_ADDRESS_GLOBAL || q == CL_KERNEL_ARG_ADDRESS_CONSTANT) {
            std::vector<char> zeros(w.buffer_bytes, 0);
            cl::MemHandle buf(clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                             zeros.size(), zeros.data(), &e));
            if (!buf) {
                return fail(cl_failure("clCreateBuffer", e));
            }
            cl_mem m = buf.get();
            keep.buffers.push_back(std::move(buf));
            e = clSetKernelArg(k, i, sizeof m, &m);
        } else if (q == CL_KERNEL_ARG_ADDRESS_LOCAL) {
            e = clSetKernelArg(k, i, local_bytes, nullptr);
        } else {
            const std::string type = arg_type_name(k, i);
            const std::size_t size = scalar_size(type, address_bits);
            if (size == 0) {
                return fail("argument " + std::to_string(i) + " of type '" + type +
                            "' cannot be filled for a warm-up launch");
            }
            std::vector<char> zeros(size, 0);
            e = clSetKernelArg(k, i, size, zeros.data());
        }
        if (e != CL_SUCCESS) {
            return fail(cl_failure("clSetKernelArg", e));
        }
    }
    return Ok{};
}

}  // namespace

Result<Ok, std::string> warm_up(cl_context ctx, cl_device_id dev, cl_program program,
                                const std::vector<std::string>& entry_points,
                                const WarmupLaunch& w) {
    cl_int e = CL_SUCCESS;
    cl::QueueHandle queue(clCreateCommandQueueWithProperties(ctx, dev, nullptr, &e));
    if (!queue) {
        return fail(cl_failure("clCreateCommandQueueWithProperties", e));
    }
    const auto names = entry_points.empty() ? kernel_names(program) : entry_points;
    for (const auto& name : names) {
        cl::KernelHandle kernel(clCreateKernel(program, name.c_str(), &e));
        if (!kernel) {
            return fail(cl_failure(("clCreateKernel(" + name + ")").c_str(), e));
        }
        LaunchArgs keep;
        if (auto set = set_args(ctx, dev, kernel.get(), w, keep); !set) {
            return fail(name + ": " + set.error());
        }
        std::size_t global[3];
        std::size_t local[3];
        for (int d = 0; d < 3; ++d) {
            global[d] = static_cast<std::size_t>(w.global[d]);
            local[d] = static_cast<std::size_t>(w.local[d]);
        }
        e = clEnqueueNDRangeKernel(queue.get(), kernel.get(), w.work_dim, nullptr, global, local, 0,
                                   nullptr, nullptr);
        if (e == CL_SUCCESS) {
            e = clFinish(queue.get());
        }
        if (e != CL_SUCCESS) {
            return fail(name + ": " + cl_failure("launch", e));
        }
    }
    return Ok{};
}

}  // namespace kcache::compiler::helper
