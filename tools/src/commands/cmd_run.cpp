// kcache run -- APP ARGS...: runs an application with the OpenCL layer
// enabled (OPENCL_LAYERS), so that its program builds go through the cache.
// It prints nothing of its own unless it cannot start the application.

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "kcache/common/read_file.hpp"
#include "run_layer.hpp"

#ifndef KCACHE_LAYER_INSTALL_PATH
#define KCACHE_LAYER_INSTALL_PATH "/usr/local/lib/libkcache-layer.so"
#endif

namespace kcache::cli {
namespace {

constexpr const char* kLayersVariable = "OPENCL_LAYERS";

// OPENCL_LAYERS with `layer` added last: ocl-icd calls the last layer it
// loads first, so the application meets kcache's layer before any other.
std::string layers_with(const std::string& layer) {
    const char* current = std::getenv(kLayersVariable);
    if (current == nullptr || *current == '\0') {
        return layer;
    }
    std::string list = current;
    for (std::size_t start = 0; start <= list.size();) {
        const std::size_t end = std::min(list.find(':', start), list.size());
        if (list.substr(start, end - start) == layer) {
            return list;
        }
        start = end + 1;
    }
    return list + ":" + layer;
}

int run_app(const ParsedArgs& args) {
    const std::string layer = layer_library_path();
    std::error_code ec;
    if (!std::filesystem::exists(layer, ec)) {
        return report(Exit::environment, "run",
                      "the layer library " + layer +
                          " does not exist (install kcache, or set KCACHE_LAYER_PATH)");
    }
    const std::string layers = layers_with(layer);
    ::setenv(kLayersVariable, layers.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& a : args.positionals()) {
        argv.push_back(const_cast<char*>(a.c_str()));
    }
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    const int err = errno;
    report(Exit::usage, "run",
           "cannot run " + args.positionals().front() + ": " + std::strerror(err));
    return err == ENOENT ? 127 : 126;
}

}  // namespace

std::string layer_library_path() {
    const char* env = std::getenv("KCACHE_LAYER_PATH");
    if (env != nullptr && *env != '\0') {
        return env;
    }
    std::error_code ec;
#ifdef KCACHE_LAYER_RELATIVE_PATH
    const std::filesystem::path here = std::filesystem::path(self_path()).parent_path();
    const auto relative = (here / KCACHE_LAYER_RELATIVE_PATH).lexically_normal();
    if (std::filesystem::exists(relative, ec)) {
        return relative.string();
    }
#endif
#ifdef KCACHE_LAYER_BUILD_PATH
    if (std::filesystem::exists(KCACHE_LAYER_BUILD_PATH, ec)) {
        return KCACHE_LAYER_BUILD_PATH;
    }
#endif
    return KCACHE_LAYER_INSTALL_PATH;
}

// ocl-icd (2.3 and later) and the Khronos loader read OPENCL_LAYERS and look
// up clInitLayer by name: both names are in a loader that supports layers.
bool loader_supports_layers(std::string& detail) {
    void* handle = ::dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) {
        detail = "no OpenCL ICD loader (libOpenCL.so.1) could be loaded";
        return false;
    }
    const link_map* map = nullptr;
    std::string path;
    if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name) {
        path = map->l_name;
    }
    ::dlclose(handle);
    auto bytes = read_regular_file(path, 64u << 20);
    if (!bytes) {
        detail = "the loader " + path + " could not be read: " + bytes.error().message;
        return false;
    }
    const bool layers = bytes->find(kLayersVariable) != std::string::npos &&
                        bytes->find("clInitLayer") != std::string::npos;
    detail = path + (layers ? " loads layers (OPENCL_LAYERS): `kcache run` works"
                            : " does not load layers: `kcache run` cannot cache (ocl-icd "
                              "2.3 or the Khronos loader of 2021 or later can)");
    return layers;
}

nlohmann::json layer_counters_json(const std::filesystem::path& dir) {
    nlohmann::json j = {{"hit", 0}, {"jit", 0}, {"fail", 0}, {"pass", 0}};
    auto text = read_regular_file(dir / "layer-counters", 4096);
    if (!text) {
        return j;
    }
    std::istringstream in(*text);
    std::string name;
    std::uint64_t n = 0;
    while (in >> name >> n) {
        if (j.contains(name)) {
            j[name] = n;
        }
    }
    return j;
}

Command run_command() {
    return {{"run",
             "-- APP [ARGS...]",
             "run an OpenCL application with its program builds cached (the layer)",
             "Runs APP with the kcache OpenCL layer enabled (OPENCL_LAYERS names\n"
             "libkcache-layer.so, after any layers already named there): every program the\n"
             "application builds from source is answered from the cache, or compiled in a\n"
             "helper under the watchdog (KCACHE_JIT_TIMEOUT_MS) and stored. Everything else\n"
             "goes to the driver unchanged. The layer reads the same KCACHE_* settings as the\n"
             "library; KCACHE_TRACE=1 prints one line per program build (HIT, JIT, FAIL,\n"
             "PASS). KCACHE_LAYER_PATH names another layer library. Nothing is printed\n"
             "besides the application's own output; its exit status is kcache run's.\n",
             {},
             1,
             SIZE_MAX,
             "  the application's exit status\n" + std::string(kExitUsage) +
                 "  5  the layer library is missing\n"
                 "  126  APP could not be run\n  127  APP was not found\n"},
            run_app};
}

}  // namespace kcache::cli
