// The names of the public enumerators, as traces, metrics, the CLI and the
// C API print them.
#include "kcache/observe/names.hpp"

namespace kcache {
inline namespace core {

static_assert(static_cast<std::size_t>(StatusCode::driver_suspect) + 1 == kStatusCount &&
              static_cast<std::size_t>(Rung::remote) + 1 == kRungCount);

const char* to_string(StatusCode s) noexcept {
    const auto i = static_cast<std::size_t>(s);
    return i < kStatusNames.size() ? kStatusNames[i] : "unknown";
}

const char* to_string(Rung r) noexcept {
    const auto i = static_cast<std::size_t>(r);
    return i < kRungNames.size() ? kRungNames[i] : "unknown";
}

const char* to_string(Mode m) noexcept {
    switch (m) {
        case Mode::blocking:
            return "blocking";
        case Mode::fail_fast:
            return "fail_fast";
        case Mode::background:
            return "background";
    }
    return "unknown";
}

const char* to_string(Source s) noexcept {
    switch (s) {
        case Source::default_value:
            return "default";
        case Source::environment:
            return "environment";
        case Source::config_file:
            return "config file";
        case Source::api:
            return "api";
    }
    return "unknown";
}

const char* to_string(MissCause c) noexcept {
    switch (c) {
        case MissCause::not_in_process:
            return "not_in_process";
        case MissCause::not_found:
            return "not_found";
        case MissCause::corrupt:
            return "corrupt";
        case MissCause::collision:
            return "collision";
        case MissCause::io_error:
            return "io_error";
        case MissCause::busy:
            return "busy";
        case MissCause::not_verified:
            return "not_verified";
        case MissCause::rejected_by_driver:
            return "rejected_by_driver";
        case MissCause::answered_below:
            return "answered_below";
        case MissCause::no_aot_target:
            return "no_aot_target";
        case MissCause::target_not_covered:
            return "target_not_covered";
        case MissCause::skipped:
            return "skipped";
        case MissCause::no_failure_record:
            return "no_failure_record";
        case MissCause::other:
            return "other";
        case MissCause::not_stored:
            return "not_stored";
    }
    return "unknown";
}

}  // namespace core
}  // namespace kcache
