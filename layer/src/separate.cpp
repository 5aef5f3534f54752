// Separate compilation: clCompileProgram of a program from source is
// answered by the cache's ladder with the executable of (source, options),
// which the JIT builds in kcache-jit under the watchdog and stores; the
// link answers from it (link.cpp). A program that does not build alone (it
// calls a function another program defines) is answered by its compile
// alone (kCompileOnlySource), which kcache-jit compiles under the watchdog
// and the store keeps apart from the build. The driver's source program stays
// uncompiled until something only the driver's compiled object answers asks
// for it (its binary, a link the cache cannot answer), which compiles it
// then. A compile with input headers is asked as a link of that one
// program, whose unit holds the headers by name and content
// (input_headers.cpp).
// What the layer cannot key (some of the devices, programs not from source)
// goes to the driver, unchanged.

#include <algorithm>
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
// `cache_options` to the options it keys and `w.input_headers` to the
// headers (the includes of both are keyed).
std::string compile_pass_reason(Cache* cache, LayerProgram& w, cl_uint num_devices,
                                const cl_device_id* device_list, const char* options,
                                cl_uint num_headers, const cl_program* headers,
                                const char** header_names, std::string& cache_options) {
    if (cache == nullptr) {
        return "the cache is not open";
    }
    cache_options = options ? options : "";
    w.input_headers.clear();
    if (num_headers != 0) {
        std::string why;
        w.input_headers = input_headers(num_headers, headers, header_names, why);
        if (!why.empty()) {
            return why;
        }
    }
    return pass_reason(w, program_devices(w.source), num_devices, device_list,
                       cache_options.c_str(), kernels_attached(w), headers_text(w.input_headers));
}

// The driver's compile of `w`'s source program with the options and input
// headers the cache keyed (the headers as driver programs of their text).
cl_int compile_keyed_in_driver(LayerProgram& w) {
    std::vector<cl_program> headers;
    std::vector<const char*> names;
    for (const auto& [name, text] : w.input_headers) {
        const char* strings = text.c_str();
        const size_t length = text.size();
        cl_int err = CL_SUCCESS;
        headers.push_back(
            target().clCreateProgramWithSource(w.context, 1, &strings, &length, &err));
        names.push_back(name.c_str());
    }
    const bool made = std::find(headers.begin(), headers.end(), nullptr) == headers.end();
    const cl_int err =
        made ? target().clCompileProgram(w.source, 0, nullptr, w.cache_options.c_str(),
                                         static_cast<cl_uint>(headers.size()),
                                         headers.empty() ? nullptr : headers.data(),
                                         names.empty() ? nullptr : names.data(), nullptr, nullptr)
             : CL_OUT_OF_HOST_MEMORY;
    for (cl_program h : headers) {
        if (h != nullptr) {
            target().clReleaseProgram(h);
        }
    }
    return err;
}

// The cache's answer to `w`'s compile alone: its unit's compiled object,
// keyed apart from its build (the request's source is kCompileOnlySource).
Answer ask_compile_only(Cache& cache, LayerProgram& w, const std::vector<cl_device_id>& devices) {
    SourceRequest request;
    request.name = "clCompileProgram";
    request.source = kCompileOnlySource;
    request.link.push_back({w.request.source, w.cache_options, w.input_headers});
    return ask_cache(cache, w.context, request, devices);
}

// The cache's answer to `w`'s compile: the executable of its build, else,
// when that fails to build (it calls a function another program defines,
// or a compile error), its compile alone (`alone` is then set). A compile
// alone whose failure is recorded fails at once, with the record's log.
Answer answer_compile(Cache& cache, LayerProgram& w, bool& alone) {
    const std::vector<cl_device_id> devices = program_devices(w.source);
    Answer a = ask_compile(cache, w, devices);
    alone = a.verdict == Verdict::pass && a.outcome.status == StatusCode::build_error;
    if (!alone) {
        return a;
    }
    a = ask_compile_only(cache, w, devices);
    if (a.outcome.status == StatusCode::build_error && a.outcome.rung == Rung::failure_record) {
        a.verdict = Verdict::fail;
    }
    return a;
}

// Keeps the cache's answer to a compile with the application's `options`
// (a failure: what build info says of it); a compile `alone` keeps no
// program (its object is no link's answer). Returns the compile's status.
cl_int keep_answer(LayerProgram& w, const Answer& a, const char* options, std::string cache_options,
                   std::chrono::milliseconds deadline, bool alone) {
    set_active(w, w.source);
    w.failed = a.verdict == Verdict::fail;
    w.failure_options = options ? options : "";
    if (w.failed) {
        w.failure_log = failed_log(a.outcome, deadline);
        return CL_COMPILE_PROGRAM_FAILURE;
    }
    w.compiled_by_kcache = true;
    w.compile_options = w.failure_options;
    w.cache_options = std::move(cache_options);
    w.compile_log = build_log(a.program);
    w.compiled = alone ? nullptr : a.program;
    if (alone) {
        release_in_driver(a.program);
    }
    return CL_SUCCESS;
}

}  // namespace

void drop_compiled(LayerProgram& w) {
    if (w.compiled != nullptr) {
        release_in_driver(w.compiled);
    }
    w.compiled = nullptr;
    w.compiled_by_kcache = false;
    w.link_keyed = false;
}

cl_int compile_in_driver(LayerProgram& w) {
    if (!w.compiled_by_kcache) {
        return CL_SUCCESS;
    }
    drop_compiled(w);
    const cl_int err = compile_keyed_in_driver(w);
    w.link_keyed = err == CL_SUCCESS;
    return err;
}

Answer ask_compile(Cache& cache, LayerProgram& w, const std::vector<cl_device_id>& devices) {
    if (w.input_headers.empty()) {
        return ask_cache(cache, w, devices, w.cache_options.c_str());
    }
    SourceRequest request;
    request.name = "clCompileProgram";
    request.source = link_source("clCompileProgram with input headers");
    request.link.push_back({w.request.source, w.cache_options, w.input_headers});
    return ask_cache(cache, w.context, request, devices);
}

cl_int CL_API_CALL compile_program(cl_program program, cl_uint num_devices,
                                   const cl_device_id* device_list, const char* options,
                                   cl_uint num_headers, const cl_program* headers,
                                   const char** header_names, Notify notify, void* user_data) {
    const auto start = Clock::now();
    LayerProgram* w = as_layer(program);
    if (w == nullptr || w->linked || w->from_il || inside_cache()) {
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
    bool alone = false;
    if (why.empty()) {
        take_driver_ms();
        w->cache_options = cache_options;
        a = answer_compile(*use.get(), *w, alone);
        driver_ms = take_driver_ms();
        why = a.verdict == Verdict::pass ? to_string(a.outcome.status) : "";
    }
    if (!why.empty()) {
        const cl_int err = driver_compile(*w, num_devices, device_list, options, num_headers,
                                          headers, header_names, notify, user_data);
        note(Verdict::pass, a.outcome.key.empty() ? nullptr : &a.outcome, ms_since(start),
             "clCompileProgram: " + why);
        // Keyed, but kcache-jit's compile failed where the driver's did not:
        // the driver's compile, which a link still keys.
        w->link_keyed = err == CL_SUCCESS && !a.outcome.key.empty() &&
                        a.outcome.status == StatusCode::build_error;
        if (w->link_keyed) {
            w->cache_options = std::move(cache_options);
        }
        return err;
    }
    note(a.verdict, &a.outcome, ms_since(start),
         a.verdict == Verdict::fail ? "clCompileProgram"
                                    : load_detail(driver_ms) + " clCompileProgram");
    const cl_int result = keep_answer(*w, a, options, std::move(cache_options),
                                      use.get()->config().jit_timeout, alone);
    lock.unlock();
    if (notify != nullptr) {
        notify(program, user_data);
    }
    return result;
}

}  // namespace kcache::layer
