#include "kcache/kcache.hpp"

namespace kcache {

const char* to_string(StatusCode s) {
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
    }
    return "unknown";
}

const char* to_string(Rung r) {
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

const char* to_string(Mode m) {
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

const char* to_string(Source s) {
    switch (s) {
        case Source::default_value:
            return "default";
        case Source::environment:
            return "environment";
        case Source::config_file:
            return "config file";
    }
    return "unknown";
}

}  // namespace kcache
