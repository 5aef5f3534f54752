// Queries on the layer's programs, answered by the driver's program that
// holds the answer: the source program for what the source defines, the
// active one for what the build made, the compile kcache answered for what
// the compile made; and specialization constants, which only need a
// program unwrapped (a program from IL's go on its IL program).

#include <cstring>
#include <new>
#include <string_view>
#include <vector>

#include "layer.hpp"
#include "service.hpp"

namespace kcache::layer {
namespace {

// Writes `bytes` as an OpenCL query answer.
cl_int answer(const void* bytes, size_t n, size_t size, void* value, size_t* size_ret) {
    if (value != nullptr) {
        if (size < n) {
            return CL_INVALID_VALUE;
        }
        std::memcpy(value, bytes, n);
    }
    if (size_ret != nullptr) {
        *size_ret = n;
    }
    return CL_SUCCESS;
}

cl_int answer_text(const std::string& text, size_t size, void* value, size_t* size_ret) {
    return answer(text.c_str(), text.size() + 1, size, value, size_ret);
}

// What a compile kcache answered says of itself: it succeeded, with its
// options, the driver's log of loading its answer, and a compiled object.
// The rest is the driver's source program's.
cl_int answer_compiled(const LayerProgram& w, cl_device_id device, cl_program_build_info name,
                       size_t size, void* value, size_t* size_ret) {
    switch (name) {
        case CL_PROGRAM_BUILD_STATUS: {
            const cl_build_status ok = CL_BUILD_SUCCESS;
            return answer(&ok, sizeof ok, size, value, size_ret);
        }
        case CL_PROGRAM_BUILD_LOG:
            return answer_text(w.compile_log, size, value, size_ret);
        case CL_PROGRAM_BUILD_OPTIONS:
            return answer_text(w.compile_options, size, value, size_ret);
        case CL_PROGRAM_BINARY_TYPE: {
            const cl_program_binary_type object = CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT;
            return answer(&object, sizeof object, size, value, size_ret);
        }
        default:
            return target().clGetProgramBuildInfo(w.source, device, name, size, value, size_ret);
    }
}

bool defined_by_source(cl_program_info name) {
    return name == CL_PROGRAM_SOURCE || name == CL_PROGRAM_IL || name == CL_PROGRAM_CONTEXT ||
           name == CL_PROGRAM_NUM_DEVICES || name == CL_PROGRAM_DEVICES;
}

}  // namespace

cl_int CL_API_CALL get_program_info(cl_program program, cl_program_info name, size_t size,
                                    void* value, size_t* size_ret) {
    LayerProgram* w = as_layer(program);
    if (w == nullptr) {
        return target().clGetProgramInfo(program, name, size, value, size_ret);
    }
    cl_program answering = nullptr;
    {
        std::lock_guard lock(w->mutex);
        if (name == CL_PROGRAM_BINARY_SIZES || name == CL_PROGRAM_BINARIES) {
            compile_in_driver(*w);  // the compiled object's bytes are the driver's
        }
        // A linked program's source program only stands in for it.
        answering = defined_by_source(name) && !w->linked ? w->source : w->active();
    }
    return target().clGetProgramInfo(answering, name, size, value, size_ret);
}

cl_int CL_API_CALL get_program_build_info(cl_program program, cl_device_id device,
                                          cl_program_build_info name, size_t size, void* value,
                                          size_t* size_ret) {
    LayerProgram* w = as_layer(program);
    if (w == nullptr) {
        return target().clGetProgramBuildInfo(program, device, name, size, value, size_ret);
    }
    std::unique_lock lock(w->mutex);
    // A link's or a build's answer says the application's options, as the
    // driver's own program does: a program the driver made from a binary
    // may keep none of them (rusticl reports "").
    if ((w->linked || w->built != nullptr) && !w->failed && name == CL_PROGRAM_BUILD_OPTIONS) {
        const cl_int checked =
            target().clGetProgramBuildInfo(w->active(), device, name, 0, nullptr, nullptr);
        return checked != CL_SUCCESS ? checked
                                     : answer_text(w->linked ? w->link_options : w->request.options,
                                                   size, value, size_ret);
    }
    if (!w->failed && !w->compiled_by_kcache) {
        const cl_program active = w->active();
        lock.unlock();
        return target().clGetProgramBuildInfo(active, device, name, size, value, size_ret);
    }
    // A build kcache stopped or a compile it answered: the driver's source
    // program was never built. Its answer for the device checks `device`
    // and `name`.
    cl_build_status status = CL_BUILD_NONE;
    const cl_int checked = target().clGetProgramBuildInfo(
        w->source, device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, nullptr);
    if (checked != CL_SUCCESS) {
        return checked;
    }
    if (w->compiled_by_kcache) {
        return answer_compiled(*w, device, name, size, value, size_ret);
    }
    switch (name) {
        case CL_PROGRAM_BUILD_STATUS: {
            const cl_build_status failed = CL_BUILD_ERROR;
            return answer(&failed, sizeof failed, size, value, size_ret);
        }
        case CL_PROGRAM_BUILD_LOG:
            return answer_text(w->failure_log, size, value, size_ret);
        case CL_PROGRAM_BUILD_OPTIONS:
            return answer_text(w->failure_options, size, value, size_ret);
        case CL_PROGRAM_BINARY_TYPE: {
            const cl_program_binary_type none = CL_PROGRAM_BINARY_TYPE_NONE;
            return answer(&none, sizeof none, size, value, size_ret);
        }
        default:
            return target().clGetProgramBuildInfo(w->source, device, name, size, value, size_ret);
    }
}

// Registered on the source program, which the driver destroys last (after
// the active one, whose end releases the layer's reference on it).
cl_int CL_API_CALL set_program_release_callback(cl_program program,
                                                void(CL_CALLBACK* notify)(cl_program, void*),
                                                void* user_data) {
    LayerProgram* w = as_layer(program);
    if (w == nullptr || notify == nullptr) {
        return target().clSetProgramReleaseCallback(unwrap(program), notify, user_data);
    }
    auto* call = new (std::nothrow) HandleCall{notify, user_data, program};
    if (call == nullptr) {
        return CL_OUT_OF_HOST_MEMORY;
    }
    const cl_int err = target().clSetProgramReleaseCallback(w->source, on_handle_call, call);
    if (err != CL_SUCCESS) {
        delete call;
    }
    return err;
}

// A program from IL takes the constant on its IL program, which the next
// build the driver makes uses; no key holds it, so from then on its builds
// pass through.
cl_int CL_API_CALL set_program_specialization_constant(cl_program program, cl_uint id, size_t size,
                                                       const void* value) {
    LayerProgram* w = as_layer(program);
    if (w == nullptr || !w->from_il) {
        return target().clSetProgramSpecializationConstant(unwrap(program), id, size, value);
    }
    std::lock_guard lock(w->mutex);
    const cl_int err = target().clSetProgramSpecializationConstant(w->source, id, size, value);
    w->specialized = w->specialized || err == CL_SUCCESS;
    return err;
}

}  // namespace kcache::layer
