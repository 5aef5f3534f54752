#pragma once
// What clBuildProgram (build.cpp) and separate compilation (separate.cpp)
// share: the checks that decide whether the cache may answer, the ask for
// every device, and the log of a compile kcache stopped.

#include <chrono>
#include <string>
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
// cache may answer it); keys the program's includes into `w.request`.
std::string pass_reason(LayerProgram& w, const std::vector<cl_device_id>& devices,
                        cl_uint num_devices, const cl_device_id* device_list, const char* options,
                        bool kernels_attached);

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

// The directory that holds the `count` input headers of a compile as files
// (input_headers.cpp), for `-I`; "" with `why` when the layer cannot key
// them (a header not from source, a name that is not a relative path, no
// store to keep them in).
std::string input_headers_dir(cl_uint count, const cl_program* headers, const char** names,
                              std::string& why);

// What CL_PROGRAM_BUILD_LOG says of a compile kcache stopped.
std::string stopped_log(const Outcome& outcome, std::chrono::milliseconds deadline);

// The trace line's note of the driver's part of an answered build.
std::string load_detail(double driver_ms);

}  // namespace kcache::layer
