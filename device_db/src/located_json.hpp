#pragma once
// A JSON document plus the source line of every value, so that semantic errors found
// after parsing can still say "file:line". nlohmann's DOM keeps no positions, so the
// document is built through its SAX interface while a counting iterator tracks how far
// the lexer has read.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/device_db/error.hpp"

namespace kcache::device_db::detail {

struct LocatedJson {
    nlohmann::json root;
    // JSON pointer ("/devices/3/pci_id") → 1-based line where that member's key (or,
    // for array elements, the value) starts.
    std::unordered_map<std::string, int> lines;

    // Line of `pointer`, else of its nearest ancestor that has one, else 1.
    int line_of(const std::string& pointer) const;
};

// `parent` + "/" + `key`, with '~' and '/' escaped as JSON pointers require.
std::string child_pointer(const std::string& parent, std::string_view key);
std::string child_pointer(const std::string& parent, std::size_t index);

// Parses strict JSON (no comments). Syntax errors stop at the first (json_syntax);
// keys repeated inside one object are reported as DeviceDbErrc::duplicate.
Result<LocatedJson, std::vector<Diagnostic>> parse_located_json(std::string_view text,
                                                                const std::string& file);

}  // namespace kcache::device_db::detail
