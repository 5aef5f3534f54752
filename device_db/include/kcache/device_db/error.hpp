#pragma once
// The typed error every device_db function returns (STYLE.md "Errors as values low").

#include <string>
#include <vector>

namespace kcache::device_db {

enum class DeviceDbErrc {
    io,                 // a file or directory could not be read
    opencl,             // an OpenCL query failed
    json_syntax,        // the data file is not valid JSON
    unknown_key,        // a key the schema does not define
    missing_key,        // a required key is absent
    wrong_type,         // a value of the wrong JSON type
    bad_hex,            // a malformed hexadecimal id
    bad_version,        // a malformed driver or IP version
    bad_range,          // an empty or inverted id / version range
    bad_value,          // a value outside its allowed set
    duplicate,          // the same id twice in one file
    unknown_reference,  // a name that refers to nothing (e.g. a missing family)
};

// Name of `code` as written in messages ("unknown_key").
const char* to_string(DeviceDbErrc code);

// One problem found in a data file, located by file and 1-based line.
struct Diagnostic {
    DeviceDbErrc code;
    std::string file;
    int line = 0;
    std::string problem;

    // "file:line: problem".
    std::string to_string() const;
};

struct DeviceDbError {
    DeviceDbErrc code;
    // Human-readable; for data files one "file:line: problem" per line.
    std::string message;
    // Every located problem (empty for errors that have no file position).
    std::vector<Diagnostic> diagnostics;
};

// Builds an DeviceDbError from located problems; `code` and the message follow them.
DeviceDbError make_error(std::vector<Diagnostic> diagnostics);

}  // namespace kcache::device_db
