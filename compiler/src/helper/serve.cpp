#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "helper.hpp"
#include "kcache/cl/program.hpp"
#include "kcache/compiler/binary_check.hpp"

namespace kcache::compiler::helper {
namespace {

using SteadyClock = std::chrono::steady_clock;

std::uint64_t micros_since(SteadyClock::time_point t) {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - t).count());
}

using cl::build_log;

// The single device binary of `p`.
Result<std::string, Failure> take_binary(cl_program p) {
    std::size_t size = 0;
    cl_int e = clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
    if (e != CL_SUCCESS || size == 0) {
        return fail(Failure{ReplyStatus::invalid_binary,
                            e ? cl_failure("clGetProgramInfo", e) : "driver gave an empty binary"});
    }
    std::string binary(size, '\0');
    unsigned char* ptr = reinterpret_cast<unsigned char*>(binary.data());
    e = clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr);
    if (e != CL_SUCCESS) {
        return fail(Failure{ReplyStatus::driver_error, cl_failure("clGetProgramInfo", e)});
    }
    return binary;
}

// Loads `binary` back, builds it and checks every entry point exists.
Result<Ok, Failure> validate(cl_context ctx, cl_device_id dev, const std::string& binary,
                             const std::vector<std::string>& entry_points) {
    const auto* data = reinterpret_cast<const std::uint8_t*>(binary.data());
    auto p = cl::program_from_binary(ctx, dev, {data, binary.size()}, "");
    if (!p) {
        return fail(Failure{ReplyStatus::invalid_binary, p.error().message});
    }
    cl_int e = CL_SUCCESS;
    for (const auto& name : entry_points) {
        cl::KernelHandle k(clCreateKernel(p->get(), name.c_str(), &e));
        if (!k) {
            return fail(Failure{ReplyStatus::invalid_binary,
                                cl_failure(("clCreateKernel(" + name + ")").c_str(), e)});
        }
    }
    return Ok{};
}

// The request's SPIR-V module: its IL, or its source when that is a module
// (whole words after the magic number, which no OpenCL C text starts with):
// a SourceRequest's module (the C API's `il`, the OpenCL layer's programs
// from IL), keyed by its bytes as a source is by its text. Empty for a
// build from source.
std::string_view module_of(const JitRequest& q) {
    if (!q.il.empty()) {
        return q.il;
    }
    const bool module = q.source.size() % 4 == 0 && looks_like_spirv(q.source);
    return module ? std::string_view(q.source) : std::string_view();
}

// The program of the request: from its IL when it has one, else from source.
// A driver without IL support (or one that refuses this module) fails here.
Result<cl::ProgramHandle, JitReply> create(cl_context ctx, const JitRequest& q) {
    cl_int e = CL_SUCCESS;
    if (const std::string_view il = module_of(q); !il.empty()) {
        cl::ProgramHandle p(clCreateProgramWithIL(ctx, il.data(), il.size(), &e));
        if (!p) {
            return fail(
                failed({ReplyStatus::driver_error, cl_failure("clCreateProgramWithIL", e) +
                                                       " (the driver refused the SPIR-V module)"}));
        }
        return p;
    }
    const char* src = q.source.c_str();
    const std::size_t len = q.source.size();
    cl::ProgramHandle p(clCreateProgramWithSource(ctx, 1, &src, &len, &e));
    if (!p) {
        return fail(
            failed({ReplyStatus::driver_error, cl_failure("clCreateProgramWithSource", e)}));
    }
    return p;
}

// Builds the source or IL; on success the built program.
Result<cl::ProgramHandle, JitReply> build_one(cl_context ctx, cl_device_id dev,
                                              const JitRequest& q) {
    auto created = create(ctx, q);
    if (!created) {
        return fail(created.error());
    }
    cl::ProgramHandle p = std::move(*created);
    // The warm-up fills arguments by type, which needs the argument metadata.
    const std::string options = q.warmup ? q.options + " -cl-kernel-arg-info" : q.options;
    const cl_int e = clBuildProgram(p.get(), 1, &dev, options.c_str(), nullptr, nullptr);
    if (e != CL_SUCCESS) {
        return fail(failed({ReplyStatus::build_error, cl_failure("clBuildProgram", e)},
                           build_log(p.get(), dev)));
    }
    return p;
}

// Builds, links or compiles alone the request's program and checks its
// entry points (a compile alone has none).
Result<cl::ProgramHandle, JitReply> build(cl_context ctx, cl_device_id dev, const JitRequest& q) {
    auto built = q.compile_only    ? compile_only(ctx, dev, q)
                 : q.units.empty() ? build_one(ctx, dev, q)
                                   : link_units(ctx, dev, q);
    if (!built) {
        return built;
    }
    cl::ProgramHandle p = std::move(*built);
    cl_int e = CL_SUCCESS;
    for (const auto& name : q.entry_points) {
        cl::KernelHandle k(clCreateKernel(p.get(), name.c_str(), &e));
        if (!k) {
            return fail(failed({ReplyStatus::build_error,
                                "entry point '" + name + "': " + cl_failure("clCreateKernel", e)},
                               build_log(p.get(), dev)));
        }
    }
    return p;
}

}  // namespace

JitReply failed(Failure f, std::string log) {
    JitReply r;
    r.status = f.status;
    r.message = std::move(f.message);
    r.build_log = std::move(log);
    return r;
}

std::string cl_failure(const char* call, cl_int err) {
    return cl::failure(call, err);
}

std::vector<std::string> kernel_names(cl_program program) {
    std::size_t n = 0;
    clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, nullptr, &n);
    std::string all(n, '\0');
    clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, n, all.data(), nullptr);
    all = all.substr(0, all.find('\0'));
    std::vector<std::string> names;
    for (std::size_t pos = 0; pos < all.size();) {
        const std::size_t end = std::min(all.find(';', pos), all.size());
        if (end > pos) {
            names.push_back(all.substr(pos, end - pos));
        }
        pos = end + 1;
    }
    return names;
}

Result<cl_device_id, Failure> Session::device(const DeviceSelector& selector) {
    const std::string key = selector.platform_name + '\0' + selector.device_name + '\0' +
                            selector.driver_version + '\0' + std::to_string(selector.vendor_id) +
                            '\0' + selector.uuid_hex;
    if (auto it = devices_.find(key); it != devices_.end()) {
        return it->second;
    }
    auto found = select_device(selector);
    if (found) {
        devices_.emplace(key, *found);
    }
    return found;
}

Result<cl_context, Failure> Session::context(cl_device_id dev) {
    if (auto it = contexts_.find(dev); it != contexts_.end()) {
        return it->second.get();
    }
    cl_int e = CL_SUCCESS;
    cl::ContextHandle ctx(clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &e));
    if (!ctx) {
        return fail(Failure{ReplyStatus::driver_error, cl_failure("clCreateContext", e)});
    }
    return contexts_.emplace(dev, std::move(ctx)).first->second.get();
}

JitReply Session::serve(const JitRequest& q) {
    const auto start = SteadyClock::now();
    HelperTimings t;
    auto found = device(q.device);
    t.select_us = micros_since(start);
    if (!found) {
        return failed(found.error());
    }
    cl_device_id dev = *found;
    auto phase = SteadyClock::now();
    auto ctx = context(dev);
    t.context_us = micros_since(phase);
    if (!ctx) {
        return failed(ctx.error());
    }
    phase = SteadyClock::now();
    auto program = build(*ctx, dev, q);
    t.build_us = micros_since(phase);
    if (!program) {
        JitReply r = program.error();
        r.timings = t;
        return r;
    }
    JitReply reply;
    reply.build_log = build_log(program->get(), dev);
    const bool warm_later = q.warmup && q.warm_after_reply;
    if (q.warmup && !warm_later) {
        phase = SteadyClock::now();
        auto warm = warm_up(*ctx, dev, program->get(), q.entry_points, *q.warmup);
        t.warmup_us = micros_since(phase);
        reply.warmed = warm.ok();
        reply.warmup_note = warm.ok() ? std::string() : warm.error();
    }
    phase = SteadyClock::now();
    auto binary = take_binary(program->get());
    t.fetch_us = micros_since(phase);
    if (!binary) {
        return failed(binary.error(), reply.build_log);
    }
    phase = SteadyClock::now();
    auto valid = validate(*ctx, dev, *binary, q.entry_points);
    t.validate_us = micros_since(phase);
    if (!valid) {
        return failed(valid.error(), reply.build_log);
    }
    reply.binary = std::move(*binary);
    t.total_us = micros_since(start);
    reply.timings = t;
    reply.warm_pending = warm_later;
    return reply;
}

}  // namespace kcache::compiler::helper
