// The C API's outcome object (kcache_outcome_*), the names of the
// enumerations, drain and the log handler with a release: what the
// header-only C++ layer needs beyond kcache.h's first part.

#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>

#include "c_api_support.hpp"

namespace kcache::c_api {
namespace {

#define KCACHE_SAME(c, cpp) static_assert(static_cast<int>(c) == static_cast<int>(cpp), #c)
KCACHE_SAME(KCACHE_MISS_NOT_IN_PROCESS, MissCause::not_in_process);
KCACHE_SAME(KCACHE_MISS_NOT_FOUND, MissCause::not_found);
KCACHE_SAME(KCACHE_MISS_CORRUPT, MissCause::corrupt);
KCACHE_SAME(KCACHE_MISS_COLLISION, MissCause::collision);
KCACHE_SAME(KCACHE_MISS_IO_ERROR, MissCause::io_error);
KCACHE_SAME(KCACHE_MISS_BUSY, MissCause::busy);
KCACHE_SAME(KCACHE_MISS_NOT_VERIFIED, MissCause::not_verified);
KCACHE_SAME(KCACHE_MISS_REJECTED_BY_DRIVER, MissCause::rejected_by_driver);
KCACHE_SAME(KCACHE_MISS_ANSWERED_BELOW, MissCause::answered_below);
KCACHE_SAME(KCACHE_MISS_NO_AOT_TARGET, MissCause::no_aot_target);
KCACHE_SAME(KCACHE_MISS_TARGET_NOT_COVERED, MissCause::target_not_covered);
KCACHE_SAME(KCACHE_MISS_SKIPPED, MissCause::skipped);
KCACHE_SAME(KCACHE_MISS_NO_FAILURE_RECORD, MissCause::no_failure_record);
KCACHE_SAME(KCACHE_MISS_OTHER, MissCause::other);
KCACHE_SAME(KCACHE_MISS_NOT_STORED, MissCause::not_stored);
KCACHE_SAME(KCACHE_SOURCE_DEFAULT, Source::default_value);
KCACHE_SAME(KCACHE_SOURCE_ENVIRONMENT, Source::environment);
KCACHE_SAME(KCACHE_SOURCE_CONFIG_FILE, Source::config_file);
KCACHE_SAME(KCACHE_SOURCE_API, Source::api);
#undef KCACHE_SAME

// The name of `value` as enumerator of E whose last enumerator is `last`.
template <class E>
const char* name_of(int value, E last) {
    if (value < 0 || value > static_cast<int>(last)) {
        return "unknown";
    }
    return to_string(static_cast<E>(value));
}

}  // namespace

kcache_outcome* new_outcome(Outcome o) noexcept {
    return new (std::nothrow) kcache_outcome{std::move(o)};
}

kcache_status answer(Outcome o, kcache_outcome** out) {
    const auto status = report(o.status, o.message);
    if (out != nullptr) {
        *out = new_outcome(std::move(o));
    }
    return status;
}

}  // namespace kcache::c_api

using namespace kcache::c_api;

extern "C" {

kcache_status kcache_outcome_status(const kcache_outcome* outcome) {
    return outcome != nullptr ? static_cast<kcache_status>(outcome->outcome.status)
                              : KCACHE_STATUS_INVALID_ARGUMENT;
}

kcache_rung kcache_outcome_rung(const kcache_outcome* outcome) {
    return outcome != nullptr ? static_cast<kcache_rung>(outcome->outcome.rung) : KCACHE_RUNG_NONE;
}

const char* kcache_outcome_message(const kcache_outcome* outcome) {
    return outcome != nullptr ? outcome->outcome.message.c_str() : "";
}

const char* kcache_outcome_key(const kcache_outcome* outcome) {
    return outcome != nullptr ? outcome->outcome.key.c_str() : "";
}

uint64_t kcache_outcome_total_us(const kcache_outcome* outcome) {
    return outcome != nullptr ? static_cast<uint64_t>(outcome->outcome.total.count()) : 0;
}

uint64_t kcache_outcome_compile_us(const kcache_outcome* outcome) {
    return outcome != nullptr ? static_cast<uint64_t>(outcome->outcome.compile.count()) : 0;
}

int kcache_outcome_resident(const kcache_outcome* outcome) {
    return outcome != nullptr && outcome->outcome.resident ? 1 : 0;
}

size_t kcache_outcome_miss_count(const kcache_outcome* outcome) {
    return outcome != nullptr ? outcome->outcome.misses.size() : 0;
}

kcache_status kcache_outcome_miss(const kcache_outcome* outcome, size_t index, kcache_rung* rung,
                                  kcache_miss_cause* cause, const char** detail) {
    if (outcome == nullptr || index >= outcome->outcome.misses.size()) {
        return invalid("kcache_outcome_miss: no outcome or no miss at that index");
    }
    const auto& m = outcome->outcome.misses[index];
    if (rung != nullptr) {
        *rung = static_cast<kcache_rung>(m.rung);
    }
    if (cause != nullptr) {
        *cause = static_cast<kcache_miss_cause>(m.cause);
    }
    if (detail != nullptr) {
        *detail = m.detail.c_str();
    }
    return report(kcache::StatusCode::ok, "");
}

void kcache_outcome_free(kcache_outcome* outcome) {
    delete outcome;
}

const char* kcache_enum_name(kcache_enum which, int value) {
    switch (value_of(which)) {
        case KCACHE_ENUM_STATUS:
            return name_of(value, kcache::StatusCode::driver_suspect);
        case KCACHE_ENUM_RUNG:
            return name_of(value, kcache::Rung::remote);
        case KCACHE_ENUM_MODE:
            return name_of(value, kcache::Mode::background);
        case KCACHE_ENUM_MISS_CAUSE:
            return name_of(value, kcache::MissCause::not_stored);
        case KCACHE_ENUM_SOURCE:
            return name_of(value, kcache::Source::api);
        default:
            return "unknown";
    }
}

kcache_status kcache_drain(kcache_cache* cache, uint64_t limit_ms) try {
    if (cache == nullptr) {
        return invalid("kcache_drain: cache is NULL");
    }
    const auto limit = std::chrono::milliseconds(
        static_cast<std::int64_t>(std::min<uint64_t>(limit_ms, uint64_t{1} << 62)));
    cache->cache->drain(limit);  // noexcept
    return report(kcache::StatusCode::ok, "");
} catch (...) {
    return escaped("kcache_drain");
}

void kcache_set_log_handler_v2(kcache_log_handler handler, void* user,
                               void (*release)(void* user)) {
    kcache_set_log_handler_v3(handler, user, release, KCACHE_LOG_WARNING);
}

void kcache_set_log_handler_v3(kcache_log_handler handler, void* user, void (*release)(void* user),
                               kcache_log_level most_verbose) {
    if (handler == nullptr) {
        kcache::set_log_handler({});
        if (release != nullptr) {
            release(user);
        }
        return;
    }
    try {
        // Released with the last copy of the sink: when another replaces it.
        std::shared_ptr<void> held(user, [release](void* u) {
            if (release != nullptr) {
                release(u);
            }
        });
        // A C caller may pass any int: read it as one (a load of an out-of-range
        // value as the C++ enum is undefined), then keep only the four levels.
        std::underlying_type_t<kcache_log_level> asked = 0;
        std::memcpy(&asked, &most_verbose, sizeof asked);
        const bool known = asked == KCACHE_LOG_ERROR || asked == KCACHE_LOG_WARNING ||
                           asked == KCACHE_LOG_INFO || asked == KCACHE_LOG_DEBUG;
        kcache::set_log_handler(
            [handler, held](kcache::LogLevel level, std::string_view message) {
                const std::string text(message);  // NUL-terminated for C
                handler(static_cast<kcache_log_level>(static_cast<int>(level)), text.c_str(),
                        held.get());
            },
            static_cast<kcache::LogLevel>(known ? asked : int{KCACHE_LOG_WARNING}));
    } catch (...) {
        // Only allocation can throw; the previous handler stays.
    }
}

}  // extern "C"
