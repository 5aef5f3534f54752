#include "kcache/kcache.hpp"

namespace kcache {

const char* to_string(Status s) {
    switch (s) {
        case Status::ok: return "ok";
        case Status::not_cached: return "not_cached";
        case Status::not_ready: return "not_ready";
        case Status::timeout: return "timeout";
        case Status::crashed: return "crashed";
        case Status::build_error: return "build_error";
        case Status::unsupported: return "unsupported";
        case Status::unknown_kernel: return "unknown_kernel";
        case Status::invalid_argument: return "invalid_argument";
        case Status::disabled: return "disabled";
        case Status::device_error: return "device_error";
        case Status::store_error: return "store_error";
        case Status::config_error: return "config_error";
        case Status::internal_error: return "internal_error";
    }
    return "unknown";
}

const char* to_string(Rung r) {
    switch (r) {
        case Rung::in_process: return "in_process";
        case Rung::user_store: return "user_store";
        case Rung::pack: return "pack";
        case Rung::aot: return "aot";
        case Rung::failure_record: return "failure_record";
        case Rung::jit: return "jit";
        case Rung::none: return "none";
    }
    return "unknown";
}

const char* to_string(Mode m) {
    switch (m) {
        case Mode::blocking: return "blocking";
        case Mode::fail_fast: return "fail_fast";
        case Mode::background: return "background";
    }
    return "unknown";
}

const char* to_string(Source s) {
    switch (s) {
        case Source::default_value: return "default";
        case Source::environment: return "environment";
        case Source::config_file: return "config file";
    }
    return "unknown";
}

}  // namespace kcache
