#pragma once
// The mapping between EntryInfo and the `entries` / `blobs` tables, shared by
// the user store, packs, export and import, so the column list exists once.

#include <optional>
#include <span>

#include "kcache/store/codec.hpp"
#include "kcache/store/types.hpp"
#include "sqlite.hpp"

namespace kcache::store::rows {

// SELECT of every EntryInfo column (see read_info) for the entry under key ?1.
extern const char* const kSelectInfoByKey;
// Same columns plus checksum and blob data: the lookup of get().
extern const char* const kSelectEntryByKey;
// Every EntryInfo column of every entry, least recently used first.
extern const char* const kSelectAllInfo;
// Every EntryInfo column, checksum and blob of every entry (export, import).
extern const char* const kSelectAllEntries;
// INSERT of one entry (bind_entry), doing nothing on an existing key; RETURNING id.
extern const char* const kInsertEntry;
// INSERT of the blob for entries.id ?1, data ?2.
extern const char* const kInsertBlob;
// DELETE of the entry under key ?1 (its blob and the totals follow by trigger).
extern const char* const kDeleteEntryByKey;

// Number of columns read_info() consumes; checksum and blob follow.
inline constexpr int kInfoColumns = 32;

// Reads the EntryInfo columns of the current row of `s`.
EntryInfo read_info(const sql::Stmt& s);

// Binds the parameters of kInsertEntry from `info` and `checksum`.
sql::Stat bind_entry(sql::Stmt& s, const EntryInfo& info, const Checksum& checksum);

// Joins entry points into the stored column form (space-separated) and back.
std::string join_entry_points(const std::vector<std::string>& names);
std::vector<std::string> split_entry_points(std::string_view column);

// Reads the current row of a kSelectEntryByKey / kSelectAllEntries statement:
// info, then verifies and decodes the blob. Fails with the corruption message.
Result<Entry, std::string> read_verified(const sql::Stmt& s);

}  // namespace kcache::store::rows
