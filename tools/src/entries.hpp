#pragma once
// Shared views of stored entries: their JSON form, listing the user store or
// a pack, and finding an entry by a key prefix.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kcache/store/store.hpp"

namespace kcache::cli {

// JSON form of an entry's metadata (`ls --json`, `get --info`).
nlohmann::json entry_to_json(const store::EntryInfo& e);
// JSON form of the hashed key fields.
nlohmann::json fields_to_json(const store::KeyFields& f);

// JSON form of a failure record (`ls --failures`, `explain`): the detail
// (with the compiler log) whole, times as UTC text, budget in ms (0: unknown).
nlohmann::json failure_to_json(const store::FailureRecord& r, store::TimeMs now_ms);

// Entries of the pack at `pack`, or of the user store when it is absent; on
// error prints why (prefixed by `command`) and sets `exit_code`.
std::optional<std::vector<store::EntryInfo>> list_entries(std::string_view command,
                                                          const std::optional<std::string>& pack,
                                                          int& exit_code);

// The key of the one entry of `store` whose hex key starts with `text` (at
// least 8 digits); on error prints why and sets `exit_code` (usage for a bad
// or ambiguous prefix, not_found for no entry).
std::optional<store::Key> resolve_key(store::Store& store, const std::string& text,
                                      std::string_view command, int& exit_code);

}  // namespace kcache::cli
