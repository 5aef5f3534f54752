// Separate compilation: clCompileProgram of a program from source is
// answered by the cache's ladder with the executable of (source, options),
// which the JIT builds in kcache-jit under the watchdog and stores, and
// clLinkProgram of one such program without link options answers with that
// executable, as clBuildProgram is a compile and a link in one. The driver's
// source program stays uncompiled until something only the driver's
// compiled object answers asks for it (its binary, a link of several
// programs or a library), which compiles it then. Input headers are keyed
// by name and content (input_headers.cpp). What the layer cannot key (some
// of the devices, programs not from source) goes to the driver, unchanged.

#include <chrono>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "build.hpp"

namespace kcache::layer {
namespace {

using Notify = void(CL_CALLBACK*)(cl_program, void*);

// The driver's log of building `p` on its first device ("" when none).
std::string build_log(cl_program p) {
    const std::vector<cl_device_id> devices = program_devices(p);
    size_t size = 0;
    if (devices.empty() || target().clGetProgramBuildInfo(p, devices.front(), CL_PROGRAM_BUILD_LOG,
                                                          0, nullptr, &size) != CL_SUCCESS) {
        return {};
    }
    std::string log(size, '\0');
    target().clGetProgramBuildInfo(p, devices.front(), CL_PROGRAM_BUILD_LOG, size, log.data(),
                                   nullptr);
    log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
    return log;
}

// The compile the layer hands to the driver, with the application's
// callback called with the layer's handle.
cl_int driver_compile(LayerProgram& w, cl_uint num_devices, const cl_device_id* devices,
                      const char* options, cl_uint num_headers, const cl_program* headers,
                      const char** header_names, Notify notify, void* user_data) {
    HandleCall* call = nullptr;
    if (!to_driver(w, kernels_attached(w) ? On::active : On::source, notify, user_data, call)) {
        return CL_OUT_OF_HOST_MEMORY;
    }
    std::vector<cl_program> inner = unwrapped(headers, num_headers);
    return target().clCompileProgram(w.active(), num_devices, devices, options, num_headers,
                                     headers ? inner.data() : nullptr, header_names,
                                     call ? on_handle_call : nullptr, call);
}

// Why the cache may not answer this compile ("" when it may); sets
// `cache_options` to the options it keys (input headers' directory first).
std::string compile_pass_reason(Cache* cache, LayerProgram& w, cl_uint num_devices,
                                const cl_device_id* device_list, const char* options,
                                cl_uint num_headers, const cl_program* headers,
                                const char** header_names, std::string& cache_options) {
    if (cache == nullptr) {
        return "the cache is not open";
    }
    cache_options = options ? options : "";
    if (num_headers != 0) {
        std::string why;
        const std::string dir = input_headers_dir(num_headers, headers, header_names, why);
        if (dir.empty()) {
            return why;
        }
        cache_options = "-I " + dir + " " + cache_options;
    }
    return pass_reason(w, program_devices(w.source), num_devices, device_list,
                       cache_options.c_str(), kernels_attached(w));
}

// Keeps the cache's answer to a compile with the application's `options`
// (a failure: what build info says of it). Returns the compile's status.
cl_int keep_answer(LayerProgram& w, const Answer& a, const char* options, std::string cache_options,
                   std::chrono::milliseconds deadline) {
    set_active(w, w.source);
    w.failed = a.verdict == Verdict::fail;
    w.failure_options = options ? options : "";
    if (w.failed) {
        w.failure_log = stopped_log(a.outcome, deadline);
        return CL_COMPILE_PROGRAM_FAILURE;
    }
    w.compiled_by_kcache = true;
    w.compiled = a.program;
    w.compile_options = w.failure_options;
    w.cache_options = std::move(cache_options);
    w.compile_log = build_log(a.program);
    return CL_SUCCESS;
}

// The executable a link of `w` alone without options makes, one reference
// the application's: the compile's answer, or the cache's again for a
// second link; null when the cache cannot answer it (the link is then the
// driver's). Link options go to the driver: it may refuse them on a
// program it would build with them (PoCL refuses -cl-denorms-are-zero).
cl_program linked(LayerProgram& w, const char* options) {
    if (options != nullptr && options[0] != '\0') {
        return nullptr;
    }
    if (w.compiled != nullptr) {
        return std::exchange(w.compiled, nullptr);
    }
    const auto start = Clock::now();
    const CacheUse use;
    if (use.get() == nullptr) {
        return nullptr;
    }
    take_driver_ms();
    const Answer a = ask_cache(*use.get(), w, program_devices(w.source), w.cache_options.c_str());
    const double driver_ms = take_driver_ms();
    if (a.program != nullptr) {
        note(a.verdict, &a.outcome, ms_since(start), load_detail(driver_ms) + " clLinkProgram");
    }
    return a.program;
}

// A link the cache may answer: one program whose compile it answered, in
// its context, for all of its devices.
bool answerable(LayerProgram& w, cl_context context, cl_uint num_devices,
                const cl_device_id* devices) {
    if (!w.compiled_by_kcache || context != w.context) {
        return false;
    }
    const std::vector<cl_device_id> all = program_devices(w.source);
    return devices == nullptr || std::vector<cl_device_id>(devices, devices + num_devices) == all;
}

}  // namespace

void drop_compiled(LayerProgram& w) {
    if (w.compiled != nullptr) {
        release_in_driver(w.compiled);
    }
    w.compiled = nullptr;
    w.compiled_by_kcache = false;
}

cl_int compile_in_driver(LayerProgram& w) {
    if (!w.compiled_by_kcache) {
        return CL_SUCCESS;
    }
    drop_compiled(w);
    // The input headers are files in the directory the options name first.
    return target().clCompileProgram(w.source, 0, nullptr, w.cache_options.c_str(), 0, nullptr,
                                     nullptr, nullptr, nullptr);
}

cl_int CL_API_CALL compile_program(cl_program program, cl_uint num_devices,
                                   const cl_device_id* device_list, const char* options,
                                   cl_uint num_headers, const cl_program* headers,
                                   const char** header_names, Notify notify, void* user_data) {
    const auto start = Clock::now();
    LayerProgram* w = as_layer(program);
    if (w == nullptr || inside_cache()) {
        if (!inside_cache()) {
            note_pass("clCompileProgram: not a program from source");
        }
        std::vector<cl_program> inner = unwrapped(headers, num_headers);
        return target().clCompileProgram(unwrap(program), num_devices, device_list, options,
                                         num_headers, headers ? inner.data() : nullptr,
                                         header_names, notify, user_data);
    }
    std::unique_lock lock(w->mutex);
    drop_compiled(*w);
    const CacheUse use;
    std::string cache_options;
    std::string why = compile_pass_reason(use.get(), *w, num_devices, device_list, options,
                                          num_headers, headers, header_names, cache_options);
    Answer a;
    double driver_ms = 0;
    if (why.empty()) {
        take_driver_ms();
        a = ask_cache(*use.get(), *w, program_devices(w->source), cache_options.c_str());
        driver_ms = take_driver_ms();
        why = a.verdict == Verdict::pass ? to_string(a.outcome.status) : "";
    }
    if (!why.empty()) {
        const cl_int err = driver_compile(*w, num_devices, device_list, options, num_headers,
                                          headers, header_names, notify, user_data);
        note(Verdict::pass, a.outcome.key.empty() ? nullptr : &a.outcome, ms_since(start),
             "clCompileProgram: " + why);
        return err;
    }
    note(a.verdict, &a.outcome, ms_since(start),
         a.verdict == Verdict::fail ? "clCompileProgram"
                                    : load_detail(driver_ms) + " clCompileProgram");
    const cl_int result =
        keep_answer(*w, a, options, std::move(cache_options), use.get()->config().jit_timeout);
    lock.unlock();
    if (notify != nullptr) {
        notify(program, user_data);
    }
    return result;
}

cl_program CL_API_CALL link_program(cl_context context, cl_uint num_devices,
                                    const cl_device_id* devices, const char* options,
                                    cl_uint num_inputs, const cl_program* inputs, Notify notify,
                                    void* user_data, cl_int* errcode_ret) {
    const auto start = Clock::now();
    LayerProgram* only = num_inputs == 1 && inputs != nullptr ? as_layer(inputs[0]) : nullptr;
    if (only != nullptr && !inside_cache()) {
        std::unique_lock lock(only->mutex);
        cl_program p =
            answerable(*only, context, num_devices, devices) ? linked(*only, options) : nullptr;
        if (p != nullptr) {
            lock.unlock();
            if (errcode_ret != nullptr) {
                *errcode_ret = CL_SUCCESS;
            }
            if (notify != nullptr) {
                notify(p, user_data);
            }
            return p;
        }
    }
    const bool with_options = options != nullptr && options[0] != '\0';
    for (cl_uint i = 0; inputs != nullptr && i < num_inputs; ++i) {
        if (LayerProgram* w = as_layer(inputs[i])) {
            std::lock_guard lock(w->mutex);
            compile_in_driver(*w);
        }
    }
    if (!inside_cache()) {
        note(Verdict::pass, nullptr, ms_since(start),
             with_options ? "clLinkProgram: link options are the driver's"
                          : "clLinkProgram: not one program whose compile kcache answered");
    }
    std::vector<cl_program> inner = unwrapped(inputs, num_inputs);
    return target().clLinkProgram(context, num_devices, devices, options, num_inputs,
                                  inputs ? inner.data() : nullptr, notify, user_data, errcode_ret);
}

}  // namespace kcache::layer
