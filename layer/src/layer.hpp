#pragma once
// The OpenCL layer (docs/design.md, "The OpenCL layer"): what its files
// share. The ICD loader hands every call of the application to the layer's
// dispatch table whatever object it carries; the layer reaches the driver
// through `target()`, the dispatch table clInitLayer received. Programs
// created from source or IL are handed to the application as `LayerProgram`s,
// so every entry point that takes or returns a program is the layer's.

#include "kcache/kcache.h"
#include "kcache/kcache_types.hpp"
#include "kcache/opencl.h"

#include <CL/cl_icd.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace kcache::layer {

// The driver side: the next layer's or the loader's dispatch table.
const _cl_icd_dispatch& target() noexcept;
// The layer's own table (every entry filled); a LayerProgram points at it.
const _cl_icd_dispatch* own_table() noexcept;

// A compile's input headers: each one's name and source text.
using InputHeaders = std::vector<std::pair<std::string, std::string>>;

// A program the application created from source or IL. Its first member is
// a dispatch pointer like every ICD object's, so the layer tells its own
// programs from the driver's by that pointer alone.
//
// `source` is the driver's program from the same source (or IL), kept for
// what the source defines (context, devices, source text, IL) and for builds
// the layer passes through. `built`, when the cache answered a build, is the driver's
// program made from the cached binary. The application's references live in
// the active program (`built`, else `source`), so the driver counts them,
// kernels included, exactly as without the layer; while `built` is set the
// layer holds one reference of its own on `source`.
struct LayerProgram {
    const _cl_icd_dispatch* dispatch = own_table();
    std::mutex mutex;
    cl_program source = nullptr;
    cl_program built = nullptr;
    cl_context context = nullptr;
    SourceRequest request;        // the source the cache keys; options set at each build
    std::size_t source_size = 0;  // the application's source: the start of request.source
    // A program from IL (il.cpp): `request.source` holds the SPIR-V module,
    // which the cache keys and kcache-jit builds as IL; it has no includes
    // and is neither compiled nor linked by the layer. `specialized`: the
    // application set a specialization constant, which no key holds, so
    // its builds pass through.
    bool from_il = false;
    bool specialized = false;
    cl_uint app_references = 1;   // the application's retains minus releases
    bool failed = false;          // the last build was stopped by kcache (below)
    std::string failure_log;      // what CL_PROGRAM_BUILD_LOG says then
    std::string failure_options;  // and CL_PROGRAM_BUILD_OPTIONS
    // clCompileProgram answered by the cache (separate.cpp): the driver's
    // source program stays uncompiled, the compiled object is `compiled`, the
    // executable of (source, `compile_options`), one reference of the
    // layer's until a link takes it (null then, `compiled_by_kcache` still
    // set); the link answers from it. A program that does not build alone
    // is answered by its compile alone (kCompileOnlySource) and keeps no
    // `compiled`: only a link with the programs it calls answers.
    bool compiled_by_kcache = false;
    cl_program compiled = nullptr;
    std::string compile_options;  // the application's
    std::string cache_options;    // those the cache keyed
    InputHeaders input_headers;   // the compile's, which the cache keyed with it
    std::string compile_log;      // the driver's log of loading `compiled`
    // The driver compiled the source program with `cache_options` (kcache's
    // compile of it failed where the driver's did not, or it was compiled
    // in the driver since): a link still keys it by its keyed source and
    // those options.
    bool link_keyed = false;
    // A program clLinkProgram returned and the cache answered (link.cpp):
    // `source` is a driver program of the first input's text, never built,
    // `built` the executable; it reports `link_options` as its build options
    // and is neither built nor compiled again.
    bool linked = false;
    std::string link_options;

    cl_program active() const noexcept { return built ? built : source; }
};

// Forgets a compile the cache answered (its program too). Caller holds
// `w.mutex`.
void drop_compiled(LayerProgram& w);
// Makes a compile the cache answered the driver's own: compiles the source
// program with the recorded options, for what only the driver's compiled
// object answers (its binary, a link the cache cannot answer). Caller holds
// `w.mutex`.
cl_int compile_in_driver(LayerProgram& w);

// Hands the application a layer program for the driver's `source`, created
// in `context` from `input` (the source text, or the IL when `from_il`);
// the driver's program itself when the layer cannot make one.
cl_program wrapped(cl_program source, cl_context context, std::string input, bool from_il);

// The layer's program behind `p`, or null for a driver object (or null).
inline LayerProgram* as_layer(cl_program p) noexcept {
    if (p == nullptr || *reinterpret_cast<const void* const*>(p) != own_table()) {
        return nullptr;
    }
    return reinterpret_cast<LayerProgram*>(p);
}
inline cl_program as_handle(LayerProgram* w) noexcept {
    return reinterpret_cast<cl_program>(w);
}
// The driver's program for `p` (the active one of a layer program).
cl_program unwrap(cl_program p) noexcept;

// libkcache's lock for program calls a driver does not survive at once,
// held while it lives (kcache_program_calls_begin/end: nothing unless a
// device's data asked for it).
struct ProgramCallsHeld {
    ProgramCallsHeld() noexcept { kcache_program_calls_begin(); }
    ~ProgramCallsHeld() { kcache_program_calls_end(); }
    ProgramCallsHeld(const ProgramCallsHeld&) = delete;
    ProgramCallsHeld& operator=(const ProgramCallsHeld&) = delete;
};

// The driver's clReleaseProgram under ProgramCallsHeld: it may be the last
// reference, whose clean-up such a driver cannot run beside a load.
cl_int release_in_driver(cl_program p);

// Registers `w`'s active program, so that kernel queries name `w`.
void remember_active(LayerProgram* w, cl_program driver_program);
void forget_active(cl_program driver_program);
// The layer program whose active program is `driver_program`, or null.
LayerProgram* owner_of(cl_program driver_program);
// Held across fork() (the layer's fork handlers), so that a child never
// inherits the registry half-changed or locked by a thread it lacks.
void lock_registry_for_fork() noexcept;
void unlock_registry_after_fork() noexcept;

// Makes `next` (one reference, the layer's) `w`'s active program, moving the
// application's references onto it. `next` may be `w->source` (the layer's
// own reference on it is then the first of the application's). Caller holds
// `w->mutex`.
void set_active(LayerProgram& w, cl_program next);

// A callback of the application (build done, program released) that the
// driver calls with its own program: `on_handle_call` calls it with the
// layer's handle instead, then frees the record.
struct HandleCall {
    void(CL_CALLBACK* notify)(cl_program, void*);
    void* user_data;
    cl_program handle;
};
void CL_CALLBACK on_handle_call(cl_program, void* data);

// The driver's programs for `count` programs at `programs` (each unwrapped).
std::vector<cl_program> unwrapped(const cl_program* programs, cl_uint count);

// The devices of `context`, by the driver (empty when it cannot say).
std::vector<cl_device_id> context_devices(cl_context context);

// While set on a thread, the layer does not wrap programs that thread creates
// from source: kcache's own calls into OpenCL pass through the layer.
struct InsideCache {
    InsideCache() noexcept;
    ~InsideCache();
    InsideCache(const InsideCache&) = delete;
    InsideCache& operator=(const InsideCache&) = delete;
};
bool inside_cache() noexcept;

// The driver's loads of binaries that kcache makes on this thread while it
// answers a build (the programs it creates from binaries and their builds):
// their milliseconds are added up, so that a build's trace line can say how
// much of it was the driver's. `take_driver_ms` returns the sum and starts
// a new one.
void add_driver_ms(double ms) noexcept;
double take_driver_ms() noexcept;

using Clock = std::chrono::steady_clock;
// Milliseconds from `start` to now.
inline double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// The layer's entry points (a subset of the dispatch table). Looking for
// platforms or creating a context starts the cache's opening (service.hpp),
// off the first build.
cl_int CL_API_CALL get_platform_ids(cl_uint, cl_platform_id*, cl_uint*);
cl_context CL_API_CALL create_context(const cl_context_properties*, cl_uint, const cl_device_id*,
                                      void(CL_CALLBACK*)(const char*, const void*, size_t, void*),
                                      void*, cl_int*);
cl_context CL_API_CALL create_context_from_type(const cl_context_properties*, cl_device_type,
                                                void(CL_CALLBACK*)(const char*, const void*, size_t,
                                                                   void*),
                                                void*, cl_int*);
cl_program CL_API_CALL create_program_with_source(cl_context, cl_uint, const char**, const size_t*,
                                                  cl_int*);
cl_program CL_API_CALL create_program_with_il(cl_context, const void*, size_t, cl_int*);
cl_program CL_API_CALL create_program_with_binary(cl_context, cl_uint, const cl_device_id*,
                                                  const size_t*, const unsigned char**, cl_int*,
                                                  cl_int*);
cl_int CL_API_CALL retain_program(cl_program);
cl_int CL_API_CALL release_program(cl_program);
cl_int CL_API_CALL get_program_info(cl_program, cl_program_info, size_t, void*, size_t*);
cl_int CL_API_CALL get_program_build_info(cl_program, cl_device_id, cl_program_build_info, size_t,
                                          void*, size_t*);
cl_int CL_API_CALL set_program_release_callback(cl_program, void(CL_CALLBACK*)(cl_program, void*),
                                                void*);
cl_int CL_API_CALL set_program_specialization_constant(cl_program, cl_uint, size_t, const void*);
cl_kernel CL_API_CALL create_kernel(cl_program, const char*, cl_int*);
cl_int CL_API_CALL create_kernels_in_program(cl_program, cl_uint, cl_kernel*, cl_uint*);
cl_int CL_API_CALL get_kernel_info(cl_kernel, cl_kernel_info, size_t, void*, size_t*);
cl_int CL_API_CALL release_kernel(cl_kernel);
cl_int CL_API_CALL build_program(cl_program, cl_uint, const cl_device_id*, const char*,
                                 void(CL_CALLBACK*)(cl_program, void*), void*);
cl_int CL_API_CALL compile_program(cl_program, cl_uint, const cl_device_id*, const char*, cl_uint,
                                   const cl_program*, const char**,
                                   void(CL_CALLBACK*)(cl_program, void*), void*);
cl_program CL_API_CALL link_program(cl_context, cl_uint, const cl_device_id*, const char*, cl_uint,
                                    const cl_program*, void(CL_CALLBACK*)(cl_program, void*), void*,
                                    cl_int*);

}  // namespace kcache::layer
