#pragma once
// What clBuildProgram (build.cpp) and separate compilation (separate.cpp)
// share: the checks that decide whether the cache may answer, the ask for
// every device, and the log of a compile kcache failed.

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "layer.hpp"
#include "service.hpp"

namespace kcache::layer {

// The program's devices, as the driver lists them (empty when it cannot).
std::vector<cl_device_id> program_devices(cl_program source);

// Whether kernels hold `w`'s active program (the driver then refuses to
// build or compile it). Caller holds `w.mutex`.
bool kernels_attached(const LayerProgram& w);

// Why the layer leaves this build or compile to the driver ("" when the
// cache may answer it); keys the program's includes into `w.request`, and
// those of `also_scanned` (a compile's input headers) with them.
std::string pass_reason(LayerProgram& w, const std::vector<cl_device_id>& devices,
                        cl_uint num_devices, const cl_device_id* device_list, const char* options,
                        bool kernels_attached, std::string_view also_scanned = {});

// Why the layer leaves a build of a program from IL to the driver ("" when
// the cache may answer it): a device that loads no IL, specialization
// constants set, a module kcache-jit does not take (il.cpp).
std::string il_pass_reason(const LayerProgram& w, const std::vector<cl_device_id>& devices);

// Readies `w` for a build or compile the driver makes: on the source
// program (`On::source`), or on the active one that kernels hold (the driver
// refuses then, as it would without the layer), with the application's
// callback in `call` (null when none) to be called with the layer's handle
// through on_handle_call. False when that record cannot be made.
enum class On { source, active };
bool to_driver(LayerProgram& w, On on, void(CL_CALLBACK* notify)(cl_program, void*),
               void* user_data, HandleCall*& call);

struct Answer {
    Verdict verdict = Verdict::pass;
    Outcome outcome;
    cl_program program = nullptr;  // ok: one reference, the layer's
};

// Asks the cache for the executable of `w`'s source built with `options`
// on every device; the first that is not ok decides.
Answer ask_cache(Cache& cache, LayerProgram& w, const std::vector<cl_device_id>& devices,
                 const char* options);
// The same for `request` in `context` (a link's).
Answer ask_cache(Cache& cache, cl_context context, const SourceRequest& request,
                 const std::vector<cl_device_id>& devices);

// The `count` input headers of a compile by name and source
// (input_headers.cpp); `why` is set when the layer cannot key them (a
// header not from source, one without a name).
InputHeaders input_headers(cl_uint count, const cl_program* headers, const char** names,
                           std::string& why);
// The headers' texts one after another, for the scan of their includes.
std::string headers_text(const InputHeaders& headers);

// The cache's answer to `w`'s compile with `w.cache_options` and
// `w.input_headers` (separate.cpp): the build of its keyed source, or with
// input headers a link of it alone, whose unit holds them.
Answer ask_compile(Cache& cache, LayerProgram& w, const std::vector<cl_device_id>& devices);

// The source of a request whose `link` holds its units (link.cpp): named
// for messages, and a text no compiler builds, should the units be lost.
std::string link_source(const std::string& what);

// What CL_PROGRAM_BUILD_LOG says of a compile kcache stopped (at the
// deadline, a crash) or answered with a recorded compile error.
std::string failed_log(const Outcome& outcome, std::chrono::milliseconds deadline);

// The trace line's note of the driver's part of an answered build.
std::string load_detail(double driver_ms);

}  // namespace kcache::layer
