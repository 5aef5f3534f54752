// libcurl loaded at its first use (curl_api.hpp).

#include "curl_api.hpp"

#include <dlfcn.h>

namespace kcache::remote {
namespace {

// The soname of the libcurl this was built against (libcurl4 in Debian).
constexpr const char* kLibcurl = "libcurl.so.4";

struct Loaded {
    CurlApi api{};
    bool ok = false;
    std::string why;
};

template <typename F>
bool bind(void* lib, const char* name, F& out, std::string& why) {
    void* sym = ::dlsym(lib, name);
    if (sym == nullptr) {
        why = std::string(kLibcurl) + " has no " + name;
        return false;
    }
    out = reinterpret_cast<F>(sym);
    return true;
}

Loaded load() {
    Loaded l;
    // Never unloaded: handles and libcurl's global state live until exit.
    void* lib = ::dlopen(kLibcurl, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
        const char* err = ::dlerror();
        l.why = std::string(kLibcurl) + " cannot be loaded (" + (err ? err : "unknown error") +
                "): the HTTP and S3 remotes need libcurl (Debian: libcurl4)";
        return l;
    }
    CURLcode (*global_init)(long) = nullptr;
    CurlApi& a = l.api;
    if (!bind(lib, "curl_global_init", global_init, l.why) ||
        !bind(lib, "curl_easy_init", a.easy_init, l.why) ||
        !bind(lib, "curl_easy_setopt", a.easy_setopt, l.why) ||
        !bind(lib, "curl_easy_perform", a.easy_perform, l.why) ||
        !bind(lib, "curl_easy_getinfo", a.easy_getinfo, l.why) ||
        !bind(lib, "curl_easy_reset", a.easy_reset, l.why) ||
        !bind(lib, "curl_easy_cleanup", a.easy_cleanup, l.why) ||
        !bind(lib, "curl_easy_strerror", a.easy_strerror, l.why) ||
        !bind(lib, "curl_slist_append", a.slist_append, l.why) ||
        !bind(lib, "curl_slist_free_all", a.slist_free_all, l.why)) {
        return l;
    }
    if (const CURLcode rc = global_init(CURL_GLOBAL_DEFAULT); rc != CURLE_OK) {
        l.why = std::string("curl_global_init failed: ") + a.easy_strerror(rc);
        return l;
    }
    l.ok = true;
    return l;
}

}  // namespace

const CurlApi* curl_api(std::string* why) {
    static const Loaded loaded = load();  // once per process, thread-safe
    if (!loaded.ok && why != nullptr) {
        *why = loaded.why;
    }
    return loaded.ok ? &loaded.api : nullptr;
}

}  // namespace kcache::remote
