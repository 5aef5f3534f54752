// Program objects the layer hands out: creation, the map from the driver's
// active program back to the layer's, references and the end of a program's
// life. A layer program ends when its active driver program does: at the
// application's last release when no kernel holds it, else at the release
// of the last kernel.

#include <new>
#include <unordered_map>
#include <utility>

#include "layer.hpp"
#include "service.hpp"

namespace kcache::layer {
namespace {

thread_local int t_inside_cache = 0;
thread_local double t_driver_ms = 0;

struct Registry {
    std::mutex mutex;
    std::unordered_map<cl_program, LayerProgram*> by_active;
};

Registry& registry() {
    static auto* r = new Registry;  // outlives every static destructor
    return *r;
}

cl_uint reference_count(cl_program p) {
    cl_uint count = 0;
    if (target().clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof count, &count, nullptr) !=
        CL_SUCCESS) {
        return 0;
    }
    return count;
}

std::string joined_source(cl_uint count, const char** strings, const size_t* lengths) {
    std::string text;
    for (cl_uint i = 0; i < count; ++i) {
        if (strings[i] == nullptr) {
            continue;
        }
        const bool sized = lengths != nullptr && lengths[i] != 0;
        text.append(strings[i], sized ? lengths[i] : std::char_traits<char>::length(strings[i]));
    }
    return text;
}

}  // namespace

InsideCache::InsideCache() noexcept {
    ++t_inside_cache;
}
InsideCache::~InsideCache() {
    --t_inside_cache;
}
bool inside_cache() noexcept {
    return t_inside_cache > 0;
}

void add_driver_ms(double ms) noexcept {
    t_driver_ms += ms;
}
double take_driver_ms() noexcept {
    return std::exchange(t_driver_ms, 0.0);
}

cl_int release_in_driver(cl_program p) {
    ProgramCallsHeld one_at_a_time;
    return target().clReleaseProgram(p);
}

void remember_active(LayerProgram* w, cl_program driver_program) {
    std::lock_guard lock(registry().mutex);
    registry().by_active[driver_program] = w;
}

void forget_active(cl_program driver_program) {
    std::lock_guard lock(registry().mutex);
    registry().by_active.erase(driver_program);
}

LayerProgram* owner_of(cl_program driver_program) {
    std::lock_guard lock(registry().mutex);
    const auto it = registry().by_active.find(driver_program);
    return it == registry().by_active.end() ? nullptr : it->second;
}

void lock_registry_for_fork() noexcept {
    registry().mutex.lock();
}
void unlock_registry_after_fork() noexcept {
    registry().mutex.unlock();
}

bool any_layer_programs() {
    std::lock_guard lock(registry().mutex);
    return !registry().by_active.empty();
}

cl_program unwrap(cl_program p) noexcept {
    LayerProgram* w = as_layer(p);
    if (w == nullptr) {
        return p;
    }
    std::lock_guard lock(w->mutex);
    return w->active();
}

std::vector<cl_program> unwrapped(const cl_program* programs, cl_uint count) {
    std::vector<cl_program> out(programs, programs + (programs ? count : 0));
    for (cl_program& p : out) {
        p = unwrap(p);
    }
    return out;
}

void CL_CALLBACK on_handle_call(cl_program, void* data) {
    auto* call = static_cast<HandleCall*>(data);
    call->notify(call->handle, call->user_data);
    delete call;
}

void set_active(LayerProgram& w, cl_program next) {
    const cl_program current = w.active();
    if (next == current) {
        return;
    }
    // `next` carries one reference of the layer's: it becomes the
    // application's first; the rest are moved over one by one.
    for (cl_uint i = 1; i < w.app_references; ++i) {
        target().clRetainProgram(next);
    }
    const cl_uint moved = current == w.source ? w.app_references - 1 : w.app_references;
    for (cl_uint i = 0; i < moved; ++i) {
        release_in_driver(current);
    }
    forget_active(current);
    w.built = next == w.source ? nullptr : next;
    remember_active(&w, next);
}

// The active driver program is gone: the layer's reference on the source
// program goes too (its release callbacks, the application's, run then).
void finish(LayerProgram* w, cl_program active) {
    forget_active(active);
    drop_compiled(*w);
    if (w->built != nullptr) {
        release_in_driver(w->source);
    }
    delete w;
}

cl_program wrapped(cl_program source, cl_context context, std::string input, bool from_il) {
    open_early();  // when the context's creation did not start it
    auto* w = new (std::nothrow) LayerProgram;
    if (w == nullptr) {
        return source;  // the driver's own program: it simply is not cached
    }
    w->source = source;
    w->context = context;
    w->from_il = from_il;
    w->request.name = from_il ? "clCreateProgramWithIL" : "";
    w->request.source = std::move(input);
    w->source_size = w->request.source.size();
    remember_active(w, source);
    return as_handle(w);
}

cl_program CL_API_CALL create_program_with_source(cl_context context, cl_uint count,
                                                  const char** strings, const size_t* lengths,
                                                  cl_int* errcode_ret) {
    const cl_program source =
        target().clCreateProgramWithSource(context, count, strings, lengths, errcode_ret);
    if (source == nullptr || inside_cache()) {
        return source;
    }
    return wrapped(source, context, joined_source(count, strings, lengths), false);
}

// A program from a binary is the driver's (the layer hands it out
// unwrapped); one that kcache loads while answering a build is timed.
cl_program CL_API_CALL create_program_with_binary(cl_context context, cl_uint count,
                                                  const cl_device_id* devices,
                                                  const size_t* lengths,
                                                  const unsigned char** binaries,
                                                  cl_int* binary_status, cl_int* errcode_ret) {
    if (!inside_cache()) {
        return target().clCreateProgramWithBinary(context, count, devices, lengths, binaries,
                                                  binary_status, errcode_ret);
    }
    const auto start = Clock::now();
    const cl_program p = target().clCreateProgramWithBinary(context, count, devices, lengths,
                                                            binaries, binary_status, errcode_ret);
    add_driver_ms(ms_since(start));
    return p;
}

cl_int CL_API_CALL retain_program(cl_program program) {
    LayerProgram* w = as_layer(program);
    if (w == nullptr) {
        return target().clRetainProgram(program);
    }
    std::lock_guard lock(w->mutex);
    const cl_int err = target().clRetainProgram(w->active());
    if (err == CL_SUCCESS) {
        ++w->app_references;
    }
    return err;
}

cl_int CL_API_CALL release_program(cl_program program) {
    LayerProgram* w = as_layer(program);
    if (w == nullptr) {
        return release_in_driver(program);
    }
    std::unique_lock lock(w->mutex);
    if (w->app_references == 0) {
        return CL_INVALID_PROGRAM;
    }
    const cl_program active = w->active();
    const bool last = reference_count(active) == 1;
    const cl_int err = release_in_driver(active);
    if (err != CL_SUCCESS) {
        return err;
    }
    --w->app_references;
    if (last) {
        lock.unlock();
        finish(w, active);
    }
    return CL_SUCCESS;
}

cl_int CL_API_CALL get_platform_ids(cl_uint count, cl_platform_id* platforms,
                                    cl_uint* platforms_ret) {
    const cl_int err = target().clGetPlatformIDs(count, platforms, platforms_ret);
    if (err == CL_SUCCESS) {
        open_early();
    }
    return err;
}

cl_context CL_API_CALL create_context(const cl_context_properties* properties, cl_uint count,
                                      const cl_device_id* devices,
                                      void(CL_CALLBACK* notify)(const char*, const void*, size_t,
                                                                void*),
                                      void* user_data, cl_int* errcode_ret) {
    const cl_context context =
        target().clCreateContext(properties, count, devices, notify, user_data, errcode_ret);
    if (context != nullptr) {
        open_early();
        prepare_early(devices, count);
    }
    return context;
}

cl_context CL_API_CALL create_context_from_type(const cl_context_properties* properties,
                                                cl_device_type type,
                                                void(CL_CALLBACK* notify)(const char*, const void*,
                                                                          size_t, void*),
                                                void* user_data, cl_int* errcode_ret) {
    const cl_context context =
        target().clCreateContextFromType(properties, type, notify, user_data, errcode_ret);
    if (context != nullptr && !inside_cache()) {
        open_early();
        try {
            const std::vector<cl_device_id> devices = context_devices(context);
            prepare_early(devices.data(), static_cast<cl_uint>(devices.size()));
        } catch (const std::bad_alloc&) {
            // Not prepared: the first builds learn the devices.
        }
    }
    return context;
}

cl_kernel CL_API_CALL create_kernel(cl_program program, const char* name, cl_int* errcode_ret) {
    return target().clCreateKernel(unwrap(program), name, errcode_ret);
}

cl_int CL_API_CALL create_kernels_in_program(cl_program program, cl_uint num_kernels,
                                             cl_kernel* kernels, cl_uint* num_kernels_ret) {
    return target().clCreateKernelsInProgram(unwrap(program), num_kernels, kernels,
                                             num_kernels_ret);
}

cl_int CL_API_CALL get_kernel_info(cl_kernel kernel, cl_kernel_info name, size_t size, void* value,
                                   size_t* size_ret) {
    const cl_int err = target().clGetKernelInfo(kernel, name, size, value, size_ret);
    if (err == CL_SUCCESS && name == CL_KERNEL_PROGRAM && value != nullptr) {
        auto* program = static_cast<cl_program*>(value);
        if (LayerProgram* w = owner_of(*program)) {
            *program = as_handle(w);
        }
    }
    return err;
}

// A kernel holds a reference on its program: releasing the last kernel of a
// program the application already released ends the layer's program.
cl_int CL_API_CALL release_kernel(cl_kernel kernel) {
    if (!any_layer_programs()) {
        return target().clReleaseKernel(kernel);
    }
    cl_uint kernel_count = 0;
    cl_program program = nullptr;
    if (target().clGetKernelInfo(kernel, CL_KERNEL_REFERENCE_COUNT, sizeof kernel_count,
                                 &kernel_count, nullptr) != CL_SUCCESS ||
        kernel_count != 1 ||
        target().clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof program, &program, nullptr) !=
            CL_SUCCESS) {
        return target().clReleaseKernel(kernel);
    }
    LayerProgram* w = owner_of(program);
    if (w == nullptr) {
        return target().clReleaseKernel(kernel);
    }
    std::unique_lock lock(w->mutex);
    const bool last = w->app_references == 0 && reference_count(program) == 1;
    const cl_int err = target().clReleaseKernel(kernel);
    if (err == CL_SUCCESS && last) {
        lock.unlock();
        finish(w, program);
    }
    return err;
}

}  // namespace kcache::layer
