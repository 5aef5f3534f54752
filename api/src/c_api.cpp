// The C API: a thin shell over the C++ facade that never lets an exception
// or a crash of its own escape, and keeps each thread's last message.

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <string>
#include <type_traits>
#include <vector>

#include "c_api_support.hpp"
#include "kcache/common/log.hpp"
#include "kcache/common/serial_calls.hpp"
#include "kcache/kcache.h"
#include "kcache/service/service_api.hpp"

namespace kcache::c_api {
namespace {

// The C enums are the C++ ones, value for value.
#define KCACHE_SAME(c, cpp) static_assert(static_cast<int>(c) == static_cast<int>(cpp), #c)
KCACHE_SAME(KCACHE_OK, kcache::StatusCode::ok);
KCACHE_SAME(KCACHE_NOT_CACHED, kcache::StatusCode::not_cached);
KCACHE_SAME(KCACHE_NOT_READY, kcache::StatusCode::not_ready);
KCACHE_SAME(KCACHE_TIMEOUT, kcache::StatusCode::timeout);
KCACHE_SAME(KCACHE_CRASHED, kcache::StatusCode::crashed);
KCACHE_SAME(KCACHE_BUILD_ERROR, kcache::StatusCode::build_error);
KCACHE_SAME(KCACHE_UNSUPPORTED, kcache::StatusCode::unsupported);
KCACHE_SAME(KCACHE_UNKNOWN_KERNEL, kcache::StatusCode::unknown_kernel);
KCACHE_SAME(KCACHE_INVALID_ARGUMENT, kcache::StatusCode::invalid_argument);
KCACHE_SAME(KCACHE_DISABLED, kcache::StatusCode::disabled);
KCACHE_SAME(KCACHE_DEVICE_ERROR, kcache::StatusCode::device_error);
KCACHE_SAME(KCACHE_STORE_ERROR, kcache::StatusCode::store_error);
KCACHE_SAME(KCACHE_CONFIG_ERROR, kcache::StatusCode::config_error);
KCACHE_SAME(KCACHE_INTERNAL_ERROR, kcache::StatusCode::internal_error);
KCACHE_SAME(KCACHE_STATUS_DRIVER_SUSPECT, kcache::StatusCode::driver_suspect);
KCACHE_SAME(KCACHE_MODE_BLOCKING, kcache::Mode::blocking);
KCACHE_SAME(KCACHE_MODE_FAIL_FAST, kcache::Mode::fail_fast);
KCACHE_SAME(KCACHE_MODE_BACKGROUND, kcache::Mode::background);
KCACHE_SAME(KCACHE_RUNG_IN_PROCESS, kcache::Rung::in_process);
KCACHE_SAME(KCACHE_RUNG_USER_STORE, kcache::Rung::user_store);
KCACHE_SAME(KCACHE_RUNG_PACK, kcache::Rung::pack);
KCACHE_SAME(KCACHE_RUNG_AOT, kcache::Rung::aot);
KCACHE_SAME(KCACHE_RUNG_FAILURE_RECORD, kcache::Rung::failure_record);
KCACHE_SAME(KCACHE_RUNG_JIT, kcache::Rung::jit);
KCACHE_SAME(KCACHE_RUNG_NONE, kcache::Rung::none);
KCACHE_SAME(KCACHE_RUNG_REMOTE, kcache::Rung::remote);
KCACHE_SAME(KCACHE_LOG_WARNING, kcache::LogLevel::warning);
KCACHE_SAME(KCACHE_LOG_ERROR, kcache::LogLevel::error);
KCACHE_SAME(KCACHE_LOG_INFO, kcache::LogLevel::info);
KCACHE_SAME(KCACHE_LOG_DEBUG, kcache::LogLevel::debug);
KCACHE_SAME(KCACHE_LOG_WARNING, kcache::logging::Level::warning);
KCACHE_SAME(KCACHE_LOG_ERROR, kcache::logging::Level::error);
KCACHE_SAME(KCACHE_LOG_INFO, kcache::logging::Level::info);
KCACHE_SAME(KCACHE_LOG_DEBUG, kcache::logging::Level::debug);
#undef KCACHE_SAME

thread_local std::string t_last_error;

}  // namespace

kcache_status report(StatusCode s, const std::string& message) {
    t_last_error = s == StatusCode::ok ? std::string() : message;
    return static_cast<kcache_status>(static_cast<int>(s));
}

kcache_status invalid(const std::string& what) {
    t_last_error = what;
    return KCACHE_STATUS_INVALID_ARGUMENT;
}

kcache_status escaped(const char* function) {
    std::string what = "unexpected exception";
    try {
        throw;
    } catch (const std::exception& e) {
        what = e.what();
    } catch (...) {
    }
    return report(kcache::StatusCode::internal_error, std::string(function) + ": " + what);
}

}  // namespace kcache::c_api

using namespace kcache::c_api;

extern "C" {

kcache_status kcache_open(kcache_cache** out) try {
    if (out == nullptr) {
        return invalid("kcache_open: out is NULL");
    }
    *out = nullptr;
    kcache::Outcome o;
    auto cache = kcache::Cache::open_default(&o);
    if (!cache) {
        return report(o.status, o.message);
    }
    *out = new kcache_cache{std::move(cache)};
    return report(kcache::StatusCode::ok, "");
} catch (...) {
    return escaped("kcache_open");
}

void kcache_close(kcache_cache* cache) {
    try {
        delete cache;
    } catch (...) {
    }
}

const char* kcache_version(void) {
    return kcache::version();
}

void kcache_set_log_handler(kcache_log_handler handler, void* user) {
    kcache_set_log_handler_v2(handler, user, nullptr);
}

namespace {
// The lock begin() took, released by the same thread's end() (a recursive
// count of its own, so end() without begin() releases nothing).
thread_local std::vector<std::unique_lock<std::recursive_mutex>> t_program_calls;
}  // namespace

void kcache_program_calls_begin(void) {
    try {
        t_program_calls.push_back(kcache::serial_calls::hold());
    } catch (...) {
        // No room to remember it: the call goes on unserialized.
    }
}

void kcache_program_calls_end(void) {
    if (!t_program_calls.empty()) {
        t_program_calls.pop_back();
    }
}

kcache_status kcache_forget_context(kcache_cache* cache, cl_context context, size_t* dropped) try {
    if (dropped != nullptr) {
        *dropped = 0;
    }
    if (cache == nullptr || context == nullptr) {
        return invalid("kcache_forget_context: cache and context must not be NULL");
    }
    std::size_t n = cache->cache->forget(context);  // noexcept
    if (dropped != nullptr) {
        *dropped = n;
    }
    return report(kcache::StatusCode::ok, "");
} catch (...) {
    return escaped("kcache_forget_context");
}

kcache_status kcache_prepare_device(kcache_cache* cache, cl_device_id device) try {
    if (cache == nullptr || device == nullptr) {
        return invalid("kcache_prepare_device: cache and device must not be NULL");
    }
    const kcache::Outcome out = cache->cache->prepare(device);  // noexcept
    return report(out.status, out.message);
} catch (...) {
    return escaped("kcache_prepare_device");
}

const char* kcache_last_error(void) {
    return t_last_error.c_str();
}

const char* kcache_status_name(kcache_status status) {
    static const char* names[] = {
        "KCACHE_OK",           "KCACHE_NOT_CACHED",     "KCACHE_NOT_READY",
        "KCACHE_TIMEOUT",      "KCACHE_CRASHED",        "KCACHE_BUILD_ERROR",
        "KCACHE_UNSUPPORTED",  "KCACHE_UNKNOWN_KERNEL", "KCACHE_INVALID_ARGUMENT",
        "KCACHE_DISABLED",     "KCACHE_DEVICE_ERROR",   "KCACHE_STORE_ERROR",
        "KCACHE_CONFIG_ERROR", "KCACHE_INTERNAL_ERROR", "KCACHE_STATUS_DRIVER_SUSPECT"};
    const long long i = value_of(status);
    return i >= 0 && i < static_cast<long long>(std::size(names)) ? names[i] : "KCACHE_UNKNOWN";
}

}  // extern "C"
