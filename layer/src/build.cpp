// clBuildProgram: a program the application created from source is answered
// by the cache's ladder, one SourceRequest per device (the same key as the
// library's: source, options, device, driver, compiler), and becomes the
// driver's program made from the answered binary. What the layer cannot key
// or the cache cannot answer is built by the driver, unchanged.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "build.hpp"
#include "include_scan.hpp"
#include "include_text.hpp"

namespace kcache::layer {
namespace {

using Notify = void(CL_CALLBACK*)(cl_program, void*);

}  // namespace

std::vector<cl_device_id> program_devices(cl_program source) {
    cl_uint n = 0;
    if (target().clGetProgramInfo(source, CL_PROGRAM_NUM_DEVICES, sizeof n, &n, nullptr) !=
        CL_SUCCESS) {
        return {};
    }
    std::vector<cl_device_id> devices(n);
    if (target().clGetProgramInfo(source, CL_PROGRAM_DEVICES, n * sizeof(cl_device_id),
                                  devices.data(), nullptr) != CL_SUCCESS) {
        return {};
    }
    return devices;
}

bool kernels_attached(const LayerProgram& w) {
    cl_uint driver_count = 0;
    target().clGetProgramInfo(w.active(), CL_PROGRAM_REFERENCE_COUNT, sizeof driver_count,
                              &driver_count, nullptr);
    return driver_count != w.app_references;
}

namespace {

// The directories the driver searches by default. The user names them in
// KCACHE_LAYER_INCLUDE_DIRS (':'-separated; set, even empty, it is all of
// them); unnamed, PoCL's are known to be none (its compiler searches no
// system directory) and other drivers' are unknown.
DefaultDirs default_include_dirs(const std::vector<cl_device_id>& devices) {
    const char* env = std::getenv("KCACHE_LAYER_INCLUDE_DIRS");
    DefaultDirs d;
    if (env != nullptr) {
        d.all_known = true;
        for (std::string_view rest = env; !rest.empty();) {
            const auto colon = rest.find(':');
            if (colon != 0) {
                d.dirs.emplace_back(rest.substr(0, colon));
            }
            rest = colon == std::string_view::npos ? "" : rest.substr(colon + 1);
        }
        return d;
    }
    d.all_known = true;
    for (cl_device_id device : devices) {
        cl_platform_id platform = nullptr;
        char name[64] = {};
        d.all_known = d.all_known &&
                      target().clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform,
                                               &platform, nullptr) == CL_SUCCESS &&
                      target().clGetPlatformInfo(platform, CL_PLATFORM_NAME, sizeof name - 1, name,
                                                 nullptr) == CL_SUCCESS &&
                      std::string_view(name) == "Portable Computing Language";
    }
    return d;
}

// Whether an option includes a file before the source (-include, -imacros;
// a path that only contains the word does not count). Options the layer
// does not split count when the word is anywhere in them.
bool includes_files(std::string_view options) {
    const bool named = options.find("-include") != std::string_view::npos ||
                       options.find("-imacros") != std::string_view::npos;
    if (!named && options.find('"') == std::string_view::npos) {
        return false;  // no word can start with either (a quote is removed in a word)
    }
    const auto words = split_options(options);
    if (!words) {
        return named;
    }
    return std::any_of(words->begin(), words->end(), [&](const std::string& word) {
        return word.rfind("-include", 0) == 0 || word.rfind("-imacros", 0) == 0;
    });
}

// Keys the files the compiler would read: the digest of every file the
// source's includes may name goes into the source the cache keys (as a
// comment at its end, which the compile ignores). Returns why the layer
// cannot key this build ("" when it can).
std::string key_includes(LayerProgram& w, const std::vector<cl_device_id>& devices,
                         std::string_view options, std::string_view also_scanned) {
    w.request.source.resize(w.source_size);
    if (includes_files(options)) {
        return "the options include files";
    }
    const std::string scanned =
        also_scanned.empty() ? std::string() : w.request.source + std::string(also_scanned);
    const std::string& text = also_scanned.empty() ? w.request.source : scanned;
    if (!may_include(text)) {
        return {};
    }
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd) == nullptr) {
        return "the working directory is unknown";
    }
    std::string why;
    const std::string digest =
        included_digest(text, options, cwd, default_include_dirs(devices), includes_dir(), why);
    if (!digest.empty()) {
        w.request.source += "\n/* kcache: included files " + digest + " */\n";
    }
    return why;
}

// The binary of a built single-device program (empty on failure).
std::vector<unsigned char> binary_of(cl_program p) {
    size_t size = 0;
    if (target().clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) !=
            CL_SUCCESS ||
        size == 0) {
        return {};
    }
    std::vector<unsigned char> bytes(size);
    unsigned char* data = bytes.data();
    if (target().clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof data, &data, nullptr) !=
        CL_SUCCESS) {
        return {};
    }
    return bytes;
}

// One driver program for every device from the programs the cache answered.
cl_program combined(cl_context context, const std::vector<cl_device_id>& devices,
                    const std::vector<Program>& answers, const char* options) {
    std::vector<std::vector<unsigned char>> binaries;
    std::vector<size_t> sizes;
    std::vector<const unsigned char*> pointers;
    for (const Program& p : answers) {
        binaries.push_back(binary_of(p.get()));
        if (binaries.back().empty()) {
            return nullptr;
        }
    }
    for (const auto& b : binaries) {
        sizes.push_back(b.size());
        pointers.push_back(b.data());
    }
    const auto start = Clock::now();
    ProgramCallsHeld one_at_a_time;  // a load: one at a time where the device data says so
    cl_int err = CL_SUCCESS;
    cl_program p = target().clCreateProgramWithBinary(context, static_cast<cl_uint>(devices.size()),
                                                      devices.data(), sizes.data(), pointers.data(),
                                                      nullptr, &err);
    const bool built = p != nullptr && target().clBuildProgram(p, 0, nullptr, options, nullptr,
                                                               nullptr) == CL_SUCCESS;
    add_driver_ms(ms_since(start));
    if (p != nullptr && !built) {
        target().clReleaseProgram(p);  // under the lock still
        return nullptr;
    }
    return p;
}

}  // namespace

std::string failed_log(const Outcome& outcome, std::chrono::milliseconds deadline) {
    const bool timed_out = outcome.status == StatusCode::timeout;
    std::string log = timed_out ? "kcache: the compile was stopped at its deadline of " +
                                      std::to_string(deadline.count()) + " ms"
                      : outcome.status == StatusCode::build_error
                          ? "kcache: the driver's compiler refused this program"
                          : "kcache: the driver's compiler crashed on this program";
    log += outcome.rung == Rung::failure_record ? " (a recorded failure answered at once)" : "";
    log += ".\n";
    if (timed_out) {
        log +=
            "To give it longer, raise KCACHE_JIT_TIMEOUT_MS in the application's environment "
            "(e.g. KCACHE_JIT_TIMEOUT_MS=600000 kcache run -- APP); a longer deadline tries "
            "again, a record under a shorter one fails at once.\n";
    } else {
        log += "`kcache gc --failures` forgets the record so that the next build tries again.\n";
    }
    return log + "kcache: " + outcome.message + "\n";
}

namespace {

// The build the layer hands to the driver, with the application's callback
// called with the layer's handle: on the source program, unless kernels hold
// the active one (the driver refuses that build, as it would without the
// layer, and the program stays as it is).
cl_int driver_build(LayerProgram& w, On on, cl_uint num_devices, const cl_device_id* devices,
                    const char* options, Notify notify, void* user_data) {
    HandleCall* call = nullptr;
    if (!to_driver(w, on, notify, user_data, call)) {
        return CL_OUT_OF_HOST_MEMORY;
    }
    return target().clBuildProgram(w.active(), num_devices, devices, options,
                                   call ? on_handle_call : nullptr, call);
}

}  // namespace

bool to_driver(LayerProgram& w, On on, void(CL_CALLBACK* notify)(cl_program, void*),
               void* user_data, HandleCall*& call) {
    if (on == On::source) {
        set_active(w, w.source);
        w.failed = false;
    }
    // A build refused before it starts calls no callback: its record is
    // left (a few bytes) rather than risk freeing one a driver still calls.
    call = notify ? new (std::nothrow) HandleCall{notify, user_data, as_handle(&w)} : nullptr;
    return notify == nullptr || call != nullptr;
}

// The program's request is kept with it, so that no build copies its source.
Answer ask_cache(Cache& cache, LayerProgram& w, const std::vector<cl_device_id>& devices,
                 const char* options) {
    w.request.options = options ? options : "";
    return ask_cache(cache, w.context, w.request, devices);
}

Answer ask_cache(Cache& cache, cl_context context, const SourceRequest& request,
                 const std::vector<cl_device_id>& devices) {
    const char* options = request.options.c_str();
    std::vector<Program> answers;
    Answer a;
    InsideCache inside;
    for (cl_device_id device : devices) {
        answers.push_back(cache.program(context, device, request));
        a.outcome = answers.back().outcome();
        if (!answers.back().ok()) {
            const StatusCode s = a.outcome.status;
            a.verdict = s == StatusCode::timeout || s == StatusCode::crashed ? Verdict::fail
                                                                             : Verdict::pass;
            return a;
        }
    }
    a.verdict = a.outcome.rung == Rung::jit ? Verdict::jit : Verdict::hit;
    a.program = devices.size() == 1 ? answers.front().release()
                                    : combined(context, devices, answers, options);
    if (a.program == nullptr) {
        a.verdict = Verdict::pass;
        a.outcome.status = StatusCode::device_error;  // the binaries did not load as one program
    }
    return a;
}

std::string pass_reason(LayerProgram& w, const std::vector<cl_device_id>& devices,
                        cl_uint num_devices, const cl_device_id* device_list, const char* options,
                        bool kernels_attached, std::string_view also_scanned) {
    const bool all_devices =
        (num_devices == 0 && device_list == nullptr) ||
        (device_list != nullptr &&
         std::vector<cl_device_id>(device_list, device_list + num_devices) == devices);
    return devices.empty()    ? "the program's devices are unknown"
           : !all_devices     ? "a build for some of the program's devices"
           : kernels_attached ? "kernels are attached"
           : w.from_il        ? il_pass_reason(w, devices)
                              : key_includes(w, devices, options ? options : "", also_scanned);
}

// The driver's loads of the answered binary in this process.
std::string load_detail(double driver_ms) {
    char text[40];
    std::snprintf(text, sizeof text, "(load %.2f)", driver_ms);
    return text;
}

cl_int CL_API_CALL build_program(cl_program program, cl_uint num_devices,
                                 const cl_device_id* device_list, const char* options,
                                 Notify notify, void* user_data) {
    const auto start = Clock::now();
    LayerProgram* w = as_layer(program);
    if (w == nullptr || w->linked) {  // a linked program: the driver refuses it
        const cl_int err = target().clBuildProgram(unwrap(program), num_devices, device_list,
                                                   options, notify, user_data);
        if (inside_cache()) {
            add_driver_ms(ms_since(start));  // kcache loading a binary
        } else {
            note(Verdict::pass, nullptr, ms_since(start), "not a program from source");
        }
        return err;
    }
    std::unique_lock lock(w->mutex);
    const CacheUse use;
    Cache* cache = use.get();
    drop_compiled(*w);  // a build supersedes a compile kcache answered
    const bool attached = kernels_attached(*w);
    const std::vector<cl_device_id> devices =
        cache == nullptr ? std::vector<cl_device_id>() : program_devices(w->source);
    std::string why = cache == nullptr
                          ? "the cache is not open"
                          : pass_reason(*w, devices, num_devices, device_list, options, attached);
    Answer a;
    double driver_ms = 0;
    if (why.empty()) {
        take_driver_ms();
        a = ask_cache(*cache, *w, devices, options);
        driver_ms = take_driver_ms();
        why = a.verdict == Verdict::pass ? to_string(a.outcome.status) : "";
    }
    if (!why.empty()) {
        const On on = attached ? On::active : On::source;
        const cl_int err =
            driver_build(*w, on, num_devices, device_list, options, notify, user_data);
        note(Verdict::pass, a.outcome.key.empty() ? nullptr : &a.outcome, ms_since(start), why);
        return err;
    }
    note(a.verdict, &a.outcome, ms_since(start),
         a.verdict == Verdict::fail || !traced() ? std::string() : load_detail(driver_ms));
    cl_int result = CL_SUCCESS;
    if (a.verdict == Verdict::fail) {
        set_active(*w, w->source);
        w->failed = true;
        w->failure_log = failed_log(a.outcome, cache->config().jit_timeout);
        w->failure_options = options ? options : "";
        result = CL_BUILD_PROGRAM_FAILURE;
    } else {
        set_active(*w, a.program);
        w->failed = false;
    }
    lock.unlock();
    if (notify != nullptr) {
        notify(program, user_data);
    }
    return result;
}

}  // namespace kcache::layer
