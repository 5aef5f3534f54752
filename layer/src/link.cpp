// clLinkProgram of programs whose compiles the cache answered: the link is
// keyed by its inputs (each compile's keyed source and options) and the
// link's options, answered from the store, or linked in kcache-jit under
// the watchdog and stored. A link of one such program without options is
// the compile's executable (clBuildProgram is a compile and a link in one).
// The application gets a layer program that reports the link's options as
// its build options, as the driver's linked program does. A library
// (-create-library), an input the cache did not compile, or a link for some
// of the inputs' devices compiles the inputs in the driver and passes on.

#include <algorithm>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "build.hpp"
#include "include_text.hpp"

namespace kcache::layer {
namespace {

using Notify = void(CL_CALLBACK*)(cl_program, void*);

// Whether the link options ask for a library (the layer keeps programs).
bool creates_library(const char* options) {
    if (options == nullptr) {
        return false;
    }
    const auto words = split_options(options);
    if (!words) {
        return std::string_view(options).find("-create-library") != std::string_view::npos;
    }
    return std::find(words->begin(), words->end(), "-create-library") != words->end();
}

// The layer's program for a link in `context` with `options`, its source a
// driver program of `text` (the first input's), active until an answer is
// set; null when it cannot be made.
LayerProgram* linked_program(cl_context context, const std::string& text, const char* options) {
    const char* strings = text.c_str();
    const size_t length = text.size();
    cl_int err = CL_SUCCESS;
    const cl_program source =
        target().clCreateProgramWithSource(context, 1, &strings, &length, &err);
    if (source == nullptr) {
        return nullptr;
    }
    auto* w = new (std::nothrow) LayerProgram;
    if (w == nullptr) {
        target().clReleaseProgram(source);
        return nullptr;
    }
    w->source = source;
    w->context = context;
    w->linked = true;
    w->link_options = options ? options : "";
    remember_active(w, source);
    return w;
}

// The request of a link of `inputs` with `options`, or why the cache may not
// answer it (`why`); `devices` is set to the inputs' devices.
SourceRequest link_request(cl_context context, cl_uint num_devices, const cl_device_id* device_list,
                           const char* options, cl_uint count, const cl_program* inputs,
                           std::vector<cl_device_id>& devices, std::string& why) {
    SourceRequest request;
    request.name = "clLinkProgram";
    request.options = options ? options : "";
    why = count == 0 || inputs == nullptr ? "no input programs"
          : creates_library(options)      ? "a library (-create-library)"
                                          : "";
    for (cl_uint i = 0; why.empty() && i < count; ++i) {
        LayerProgram* w = as_layer(inputs[i]);
        if (w == nullptr || w->from_il) {
            why = "an input program not from source";
            break;
        }
        std::lock_guard lock(w->mutex);
        const std::vector<cl_device_id> its = program_devices(w->source);
        const bool keyed = w->compiled_by_kcache || w->link_keyed;
        if (!keyed || w->context != context || (i > 0 && its != devices)) {
            why = "an input program whose compile kcache did not answer for these devices";
        }
        devices = its;
        request.link.push_back({w->request.source, w->cache_options, w->input_headers});
    }
    if (why.empty() && device_list != nullptr &&
        std::vector<cl_device_id>(device_list, device_list + num_devices) != devices) {
        why = "a link for some of the programs' devices";
    }
    request.source = link_source("clLinkProgram of " + std::to_string(count) + " programs");
    return request;
}

// The executable of a link of `w` alone without options, one reference the
// application's: the compile's answer, or the cache's again for a second
// link (the entry a build of the same source and options makes).
Answer linked_alone(Cache& cache, LayerProgram& w) {
    Answer a;
    if (w.compiled != nullptr) {
        a.verdict = Verdict::hit;
        a.program = std::exchange(w.compiled, nullptr);
        return a;
    }
    return ask_compile(cache, w, program_devices(w.source));
}

// The cache's answer to the link (a pass when it may not answer: `why`).
Answer answer_link(Cache& cache, cl_context context, cl_uint num_devices,
                   const cl_device_id* device_list, const char* options, cl_uint count,
                   const cl_program* inputs, std::string& why) {
    std::vector<cl_device_id> devices;
    const SourceRequest request =
        link_request(context, num_devices, device_list, options, count, inputs, devices, why);
    if (!why.empty()) {
        return {};
    }
    if (count == 1 && request.options.empty()) {
        LayerProgram& only = *as_layer(inputs[0]);
        std::lock_guard lock(only.mutex);
        return linked_alone(cache, only);
    }
    return ask_cache(cache, context, request, devices);
}

// The link the driver makes: the inputs whose compiles kcache answered are
// compiled in the driver first.
cl_program driver_link(cl_context context, cl_uint num_devices, const cl_device_id* devices,
                       const char* options, cl_uint count, const cl_program* inputs, Notify notify,
                       void* user_data, cl_int* errcode_ret) {
    for (cl_uint i = 0; inputs != nullptr && i < count; ++i) {
        if (LayerProgram* w = as_layer(inputs[i])) {
            std::lock_guard lock(w->mutex);
            compile_in_driver(*w);
        }
    }
    std::vector<cl_program> inner = unwrapped(inputs, count);
    return target().clLinkProgram(context, num_devices, devices, options, count,
                                  inputs ? inner.data() : nullptr, notify, user_data, errcode_ret);
}

// The application's program for the cache's answer `a` (ok or stopped);
// null when the layer cannot make one (`a.program` is then released).
LayerProgram* keep_link(cl_context context, const cl_program* inputs, const char* options,
                        Answer& a, std::chrono::milliseconds deadline) {
    std::string first;
    {
        LayerProgram& w = *as_layer(inputs[0]);
        std::lock_guard lock(w.mutex);
        first = w.request.source.substr(0, w.source_size);
    }
    LayerProgram* w = linked_program(context, first, options);
    if (w == nullptr) {
        if (a.program != nullptr) {
            release_in_driver(a.program);
        }
        return nullptr;
    }
    if (a.verdict == Verdict::fail) {
        w->failed = true;
        w->failure_log = failed_log(a.outcome, deadline);
        w->failure_options = w->link_options;
    } else {
        set_active(*w, a.program);
    }
    return w;
}

}  // namespace

std::string link_source(const std::string& what) {
    return "#error kcache: " + what + ", built from its units and never from this text\n";
}

cl_program CL_API_CALL link_program(cl_context context, cl_uint num_devices,
                                    const cl_device_id* devices, const char* options,
                                    cl_uint num_inputs, const cl_program* inputs, Notify notify,
                                    void* user_data, cl_int* errcode_ret) {
    if (inside_cache()) {
        return driver_link(context, num_devices, devices, options, num_inputs, inputs, notify,
                           user_data, errcode_ret);
    }
    const auto start = Clock::now();
    const CacheUse use;
    std::string why = use.get() == nullptr ? "the cache is not open" : "";
    Answer a;
    double driver_ms = 0;
    if (why.empty()) {
        take_driver_ms();
        a = answer_link(*use.get(), context, num_devices, devices, options, num_inputs, inputs,
                        why);
        driver_ms = take_driver_ms();
        why = !why.empty() || a.verdict != Verdict::pass ? why : to_string(a.outcome.status);
    }
    LayerProgram* w = why.empty()
                          ? keep_link(context, inputs, options, a, use.get()->config().jit_timeout)
                          : nullptr;
    if (w == nullptr) {
        note(Verdict::pass, a.outcome.key.empty() ? nullptr : &a.outcome, ms_since(start),
             "clLinkProgram: " + (why.empty() ? std::string("out of host memory") : why));
        return driver_link(context, num_devices, devices, options, num_inputs, inputs, notify,
                           user_data, errcode_ret);
    }
    if (!a.outcome.key.empty()) {  // else the compile's answer, counted at the compile
        note(a.verdict, &a.outcome, ms_since(start),
             a.verdict == Verdict::fail || !traced() ? "clLinkProgram"
                                                     : load_detail(driver_ms) + " clLinkProgram");
    }
    if (errcode_ret != nullptr) {
        *errcode_ret = w->failed ? CL_LINK_PROGRAM_FAILURE : CL_SUCCESS;
    }
    if (notify != nullptr) {
        notify(as_handle(w), user_data);
    }
    return as_handle(w);
}

}  // namespace kcache::layer
