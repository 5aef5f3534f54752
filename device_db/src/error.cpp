#include "kcache/device_db/error.hpp"

#include <utility>

namespace kcache::device_db {

const char* to_string(DeviceDbErrc code) {
    switch (code) {
        case DeviceDbErrc::io:
            return "io";
        case DeviceDbErrc::opencl:
            return "opencl";
        case DeviceDbErrc::json_syntax:
            return "json_syntax";
        case DeviceDbErrc::unknown_key:
            return "unknown_key";
        case DeviceDbErrc::missing_key:
            return "missing_key";
        case DeviceDbErrc::wrong_type:
            return "wrong_type";
        case DeviceDbErrc::bad_hex:
            return "bad_hex";
        case DeviceDbErrc::bad_version:
            return "bad_version";
        case DeviceDbErrc::bad_range:
            return "bad_range";
        case DeviceDbErrc::bad_value:
            return "bad_value";
        case DeviceDbErrc::duplicate:
            return "duplicate";
        case DeviceDbErrc::unknown_reference:
            return "unknown_reference";
    }
    return "unknown";
}

std::string Diagnostic::to_string() const {
    return file + ":" + std::to_string(line) + ": " + problem;
}

DeviceDbError make_error(std::vector<Diagnostic> diagnostics) {
    DeviceDbError error{diagnostics.empty() ? DeviceDbErrc::io : diagnostics.front().code, {}, {}};
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
