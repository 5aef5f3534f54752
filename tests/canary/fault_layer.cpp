// A test-only OpenCL loader layer (OPENCL_LAYERS=libkcache_fault_layer.so,
// ocl-icd ≥ 2.3) that makes a real driver (PoCL) misbehave the way a driver
// update or a miscompiling compiler would, so the driver canary can be tested
// against faults it has to catch. Every fault is chosen by the environment of
// the process (and so of the helpers it starts):
//
//   KCACHE_FAULT_DRIVER=TEXT       CL_DRIVER_VERSION reads TEXT (a driver update)
//   KCACHE_FAULT_MATCH=TEXT        the faults below touch only programs whose
//                                  source contains TEXT (all when unset)
//   KCACHE_FAULT_SOURCE_FROM=A     the compiler sees occurrence number
//   KCACHE_FAULT_SOURCE_TO=B       KCACHE_FAULT_SOURCE_NTH (1-based, default 1)
//   KCACHE_FAULT_SOURCE_NTH=N      of A in the source replaced by B
//   KCACHE_FAULT_OPTIONS_ADD=OPTS  appended to the build options (fast math…)
//   KCACHE_FAULT_OPTIONS_FROM=A    A replaced by B in the build options
//   KCACHE_FAULT_OPTIONS_TO=B      (another variant's code under this one's name)
//   KCACHE_FAULT_BINARY=flip       the binary the driver hands out has a quarter
//                                  of its bytes inverted, from its middle on
//   KCACHE_FAULT_HANG=KERNEL       enqueueing KERNEL never returns
//   KCACHE_FAULT_CRASH=KERNEL      enqueueing KERNEL aborts the process (SIGABRT)
//   KCACHE_FAULT_READ=KIND …       results read back altered (fault_reads.hpp)
//
// Built only under tests/; the product's own layer is elsewhere.

#include <CL/cl_layer.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "fault_reads.hpp"
#include "test_layer.hpp"

namespace {

cl_icd_dispatch& g_target = kcache::test::g_next;  // the next calls

std::string env(const char* name) {
    const char* v = std::getenv(name);
    return v ? v : "";
}

// Programs built from source that KCACHE_FAULT_MATCH selected.
std::mutex g_mu;
std::set<cl_program> g_faulty;

bool faulty(cl_program p) {
    std::lock_guard g(g_mu);
    return g_faulty.count(p) != 0;
}

// Set once a kernel of a faulty program was enqueued: reads after it are
// its results.
bool g_ran_faulty = false;

cl_int CL_API_CALL get_device_info(cl_device_id device, cl_device_info name, size_t size,
                                   void* value, size_t* size_ret) {
    const std::string driver = env("KCACHE_FAULT_DRIVER");
    if (name != CL_DRIVER_VERSION || driver.empty()) {
        return g_target.clGetDeviceInfo(device, name, size, value, size_ret);
    }
    if (size_ret) {
        *size_ret = driver.size() + 1;
    }
    if (value) {
        if (size < driver.size() + 1) {
            return CL_INVALID_VALUE;
        }
        std::memcpy(value, driver.c_str(), driver.size() + 1);
    }
    return CL_SUCCESS;
}

// `text` with occurrence `nth` (1-based) of `from` replaced by `to`.
std::string replaced(std::string text, const std::string& from, const std::string& to, long nth) {
    std::size_t at = text.find(from);
    for (long i = 1; i < nth && at != std::string::npos; ++i) {
        at = text.find(from, at + 1);
    }
    if (!from.empty() && at != std::string::npos) {
        text.replace(at, from.size(), to);
    }
    return text;
}

cl_program CL_API_CALL create_with_source(cl_context context, cl_uint count, const char** strings,
                                          const size_t* lengths, cl_int* err) {
    std::string source;
    for (cl_uint i = 0; i < count; ++i) {
        source += lengths && lengths[i] ? std::string(strings[i], lengths[i]) : strings[i];
    }
    const std::string match = env("KCACHE_FAULT_MATCH");
    const bool selected = match.empty() || source.find(match) != std::string::npos;
    if (selected) {
        const long nth = std::strtol(env("KCACHE_FAULT_SOURCE_NTH").c_str(), nullptr, 10);
        source = replaced(source, env("KCACHE_FAULT_SOURCE_FROM"), env("KCACHE_FAULT_SOURCE_TO"),
                          nth > 0 ? nth : 1);
    }
    const char* text = source.c_str();
    const size_t length = source.size();
    cl_program p = g_target.clCreateProgramWithSource(context, 1, &text, &length, err);
    if (p && selected) {
        std::lock_guard g(g_mu);
        g_faulty.insert(p);
    }
    return p;
}

cl_int CL_API_CALL build(cl_program program, cl_uint n, const cl_device_id* devices,
                         const char* options, void(CL_CALLBACK* notify)(cl_program, void*),
                         void* data) {
    std::string opts = options ? options : "";
    if (faulty(program)) {
        opts = replaced(opts, env("KCACHE_FAULT_OPTIONS_FROM"), env("KCACHE_FAULT_OPTIONS_TO"), 1);
        const std::string add = env("KCACHE_FAULT_OPTIONS_ADD");
        opts += add.empty() ? "" : " " + add;
    }
    return g_target.clBuildProgram(program, n, devices, opts.c_str(), notify, data);
}

cl_int CL_API_CALL get_program_info(cl_program program, cl_program_info name, size_t size,
                                    void* value, size_t* size_ret) {
    const cl_int err = g_target.clGetProgramInfo(program, name, size, value, size_ret);
    if (err != CL_SUCCESS || name != CL_PROGRAM_BINARIES || value == nullptr ||
        env("KCACHE_FAULT_BINARY") != "flip" || !faulty(program)) {
        return err;
    }
    std::size_t bytes = 0;
    if (g_target.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof bytes, &bytes,
                                  nullptr) != CL_SUCCESS) {
        return err;
    }
    unsigned char* binary = *static_cast<unsigned char**>(value);
    for (std::size_t i = bytes / 2; binary && i < bytes / 2 + bytes / 4; ++i) {
        binary[i] = static_cast<unsigned char>(~binary[i]);
    }
    return err;
}

cl_int CL_API_CALL enqueue_nd_range(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                                    const size_t* offset, const size_t* global, const size_t* local,
                                    cl_uint waits, const cl_event* wait_list, cl_event* event) {
    char name[256] = {};
    g_target.clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, nullptr);
    if (env("KCACHE_FAULT_HANG") == name) {
        for (;;) {
            ::pause();
        }
    }
    if (env("KCACHE_FAULT_CRASH") == name) {
        std::abort();  // PoCL handles SIGSEGV itself; a driver assertion aborts
    }
    cl_program program = nullptr;
    g_target.clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof program, &program, nullptr);
    // A program loaded from a binary (what the canary runs) has no source to
    // match: without KCACHE_FAULT_MATCH every kernel counts.
    if (faulty(program) || env("KCACHE_FAULT_MATCH").empty()) {
        std::lock_guard g(g_mu);
        g_ran_faulty = true;
    }
    return g_target.clEnqueueNDRangeKernel(queue, kernel, dims, offset, global, local, waits,
                                           wait_list, event);
}

cl_int CL_API_CALL read_buffer(cl_command_queue queue, cl_mem mem, cl_bool blocking, size_t offset,
                               size_t size, void* out, cl_uint waits, const cl_event* wait_list,
                               cl_event* event) {
    const cl_int err = g_target.clEnqueueReadBuffer(queue, mem, blocking, offset, size, out, waits,
                                                    wait_list, event);
    const std::string kind = env("KCACHE_FAULT_READ");
    const unsigned long min_bytes =
        std::strtoul(env("KCACHE_FAULT_READ_MIN_BYTES").c_str(), nullptr, 10);
    bool ran = false;
    {
        std::lock_guard g(g_mu);
        ran = g_ran_faulty;
    }
    if (err == CL_SUCCESS && blocking && ran && !kind.empty() && size >= min_bytes &&
        !kcache::test::alter_read(kind, env("KCACHE_FAULT_READ_TYPE"),
                                  static_cast<unsigned char*>(out), size)) {
        std::abort();  // a misspelt fault must not pass as a clean run
    }
    return err;
}

}  // namespace

void kcache::test::take_calls(cl_icd_dispatch& layer) {
    layer.clGetDeviceInfo = get_device_info;
    layer.clCreateProgramWithSource = create_with_source;
    layer.clBuildProgram = build;
    layer.clGetProgramInfo = get_program_info;
    layer.clEnqueueNDRangeKernel = enqueue_nd_range;
    layer.clEnqueueReadBuffer = read_buffer;
}
