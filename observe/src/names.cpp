// The names of the public enumerators, as traces, metrics, the CLI and the
// C API print them.
#include "kcache/observe/names.hpp"

namespace kcache {
inline namespace core {

const char* to_string(StatusCode s) noexcept {
    switch (s) {
        case StatusCode::ok:
            return "ok";
        case StatusCode::not_cached:
            return "not_cached";
        case StatusCode::not_ready:
            return "not_ready";
        case StatusCode::timeout:
            return "timeout";
        case StatusCode::crashed:
            return "crashed";
        case StatusCode::build_error:
            return "build_error";
        case StatusCode::unsupported:
            return "unsupported";
        case StatusCode::unknown_kernel:
            return "unknown_kernel";
        case StatusCode::invalid_argument:
            return "invalid_argument";
        case StatusCode::disabled:
            return "disabled";
        case StatusCode::device_error:
            return "device_error";
        case StatusCode::store_error:
            return "store_error";
        case StatusCode::config_error:
            return "config_error";
        case StatusCode::internal_error:
            return "internal_error";
        case StatusCode::driver_suspect:
            return "driver_suspect";
    }
    return "unknown";
}

const char* to_string(Rung r) noexcept {
    switch (r) {
        case Rung::in_process:
            return "in_process";
        case Rung::user_store:
            return "user_store";
        case Rung::pack:
            return "pack";
        case Rung::aot:
            return "aot";
        case Rung::failure_record:
            return "failure_record";
        case Rung::jit:
            return "jit";
        case Rung::none:
            return "none";
        case Rung::remote:
            return "remote";
    }
    return "unknown";
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
