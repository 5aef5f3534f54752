#pragma once
// Reads and validates device data files. Every problem is reported as
// "file:line: problem"; unknown keys, duplicate ids, malformed hex and bad version
// ranges are errors, never ignored.

#include <filesystem>
#include <string_view>

#include "kcache/common/result.hpp"
#include "kcache/device_db/error.hpp"
#include "kcache/device_db/records.hpp"

namespace kcache::device_db {

// Parses `text` as a data file named `file_name` in messages. Returns every problem
// found (JSON syntax stops at the first) as one Error.
Result<DataFile, DeviceDbError> parse_data_file(std::string_view text, std::string_view file_name);

// Reads `path` and parses it; DeviceDbErrc::io when it cannot be read.
Result<DataFile, DeviceDbError> read_data_file(const std::filesystem::path& path);

// The records of the data files compiled into the library (devices.json,
// quirks.json): C++ generated from them at build time, so nothing is parsed.
Result<std::vector<DataFile>, DeviceDbError> builtin_data_files();

}  // namespace kcache::device_db
