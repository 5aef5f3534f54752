#include "kcache/device_db/error.hpp"

#include <utility>

namespace kcache::device_db {

const char* to_string(ErrorCode code) {
    switch (code) {
        case ErrorCode::io:
            return "io";
        case ErrorCode::opencl:
            return "opencl";
        case ErrorCode::json_syntax:
            return "json_syntax";
        case ErrorCode::unknown_key:
            return "unknown_key";
        case ErrorCode::missing_key:
            return "missing_key";
        case ErrorCode::wrong_type:
            return "wrong_type";
        case ErrorCode::bad_hex:
            return "bad_hex";
        case ErrorCode::bad_version:
            return "bad_version";
        case ErrorCode::bad_range:
            return "bad_range";
        case ErrorCode::bad_value:
            return "bad_value";
        case ErrorCode::duplicate:
            return "duplicate";
        case ErrorCode::unknown_reference:
            return "unknown_reference";
    }
    return "unknown";
}

std::string Diagnostic::to_string() const {
    return file + ":" + std::to_string(line) + ": " + problem;
}

Error make_error(std::vector<Diagnostic> diagnostics) {
    Error error{diagnostics.empty() ? ErrorCode::io : diagnostics.front().code, {}, {}};
    for (const Diagnostic& d : diagnostics) {
        if (!error.message.empty()) {
            error.message += '\n';
        }
        error.message += d.to_string();
    }
    error.diagnostics = std::move(diagnostics);
    return error;
}

}  // namespace kcache::device_db
