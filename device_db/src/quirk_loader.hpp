#pragma once
// Reads one quirk rule of a data file:
//   quirk  := { "id": str, "match": match, ["actions": [action]], ["jit_timeout_ms": uint],
//               ["notes": str] }          at least one action or a jit_timeout_ms
//   match  := { ["vendor": hex], ["pci_ids": [hex]], ["pci_id_ranges": [range]],
//               ["families": [str]], ["codenames": [str]], ["driver": driver] }
//                                          at least one criterion
//   range  := { "first": hex, "last": hex }              first <= last
//   driver := { ["min": version], ["max": version] }     inclusive, min <= max, one needed
//   action := "verify_before_use" | "no_cached_binaries" | "deny"

#include <optional>
#include <string>

#include "field_reader.hpp"
#include "kcache/device_db/records.hpp"

namespace kcache::device_db::detail {

// The rule read by `reader`, or nullopt after recording its problems.
std::optional<QuirkRule> read_quirk(const LocatedJson& doc, FieldReader& reader,
                                    const std::string& file);

}  // namespace kcache::device_db::detail
