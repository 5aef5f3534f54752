#pragma once
// Hot copies: the raw bytes of a store entry in a file of their own, so that
// a process's first hit reads one file instead of opening SQLite
// (docs/design.md, "Hot copies").
//
// Layout, inside the store directory:
//   hot/<inode of store.sqlite>/STAMP       "kcache hot copies 3, schema <N>\n"
//   hot/<inode of store.sqlite>/SECRET      64 hex digits and "\n": 32 random
//                                           bytes, made once per directory
//   hot/<inode of store.sqlite>/<key hex>   one copy, format below
// A copy is written only under the store's write lock (inside the put's or
// the write-back's transaction) and removed by a TEMP trigger on every
// deletion from `entries`, under the same lock; so a copy exists only while
// its entry does. A new store file clears the directory of its inode before
// it is published, and an open of the store removes the directories of other
// store files.
//
// Copy format (integers little-endian):
//   magic     8 bytes "KCHOT\x02\0\0"
//   key_len   u64     length of the key record
//   raw_size  u64     length of the bytes
//   checksum  16      XXH3-128 of the bytes (codec.hpp)
//   tag       32      HMAC-SHA256 under SECRET of magic..checksum and key
//   key       key_len serialize_key_fields() of the entry's fields
//   bytes     raw_size
// The tag says that this store wrote the copy: a copy made elsewhere, or
// one whose bytes were replaced and checksum recomputed, fails it, so a
// first hit before SQLite opens serves only what the store itself wrote.

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "kcache/store/codec.hpp"
#include "kcache/store/hot_bytes.hpp"
#include "kcache/store/key.hpp"
#include "kcache/store/types.hpp"

namespace kcache::store::hot {

// The key that tags the copies of one directory (SECRET).
using Secret = std::array<std::uint8_t, 32>;

// The directory of hot copies for the store file `db_path` of `store_dir`
// when it exists, is a directory of this user closed to others and carries
// this kcache's stamp and a secret (stored in `*secret` when given); empty
// otherwise (no copy is then read or written).
std::filesystem::path stamped_dir(const std::filesystem::path& store_dir,
                                  const std::filesystem::path& db_path, Secret* secret = nullptr);

// After a writable open of `db_path`: creates (0700) and stamps its
// directory (removing the copies of a directory stamped otherwise), makes
// its secret unless it has one (stored in `secret`), removes those of other
// store files; returns it, or empty when hot copies cannot be kept here.
std::filesystem::path set_up(const std::filesystem::path& store_dir,
                             const std::filesystem::path& db_path, Secret& secret);

// Removes the stamp of `dir`, so that the next open checks the store file at
// once (after a deferred open found it newer or another program's).
void unstamp(const std::filesystem::path& dir);

// Removes the hot copies of the file `new_file` before it becomes the store
// file (its inode may be that of a removed store file).
void clear_for_new_file(const std::filesystem::path& store_dir,
                        const std::filesystem::path& new_file);

// A copy as read: its bytes (in the thread's reused memory) and their
// checksum.
struct Copy {
    HotBytes bytes;
    Checksum checksum;
};

// What read() found: the copy, when sound; `oversize` when a copy larger
// than asked for is there; `damaged` when one failed a check. Both are left
// in place: only a caller holding the store's write lock removes a copy
// (forget), since without it a writer may rename a new copy over the name
// between the check and the removal.
struct Found {
    std::optional<Copy> copy;
    bool oversize = false;
    bool damaged = false;
};

// Reads the copy for the key `serialized` (serialize_key_fields) hashes to
// into `memory`, when there is one of at most `max_file_size` bytes whose
// key record, size, checksum and tag (under `secret`) match.
Found read(const std::filesystem::path& dir, const Secret& secret, const Key& key,
           std::string_view serialized, std::uint64_t max_file_size,
           HotBytes::Memory memory = HotBytes::Memory::reused);

// The size of the copy of `raw_size` bytes under `serialized`.
std::uint64_t file_size_for(std::string_view serialized, std::uint64_t raw_size);

// The key hex names of the copies in `dir`.
std::vector<std::string> list(const std::filesystem::path& dir);

// Whether a copy for `key_hex` exists (not checked).
bool exists(const std::filesystem::path& dir, std::string_view key_hex);

// What a writer knows of the bytes its directory's copies hold, between
// scans of the directory.
struct Tally {
    std::uint64_t bytes = 0;
    bool known = false;  // false until the first scan
};

// Writes the copy of `raw`. Then, at the first write and whenever `tally`
// says the copies may hold more than `bound` bytes, scans them and removes
// the oldest down to 90 % of `bound`. A copy larger than `bound` is not
// written. Best effort: a copy that cannot be written is simply absent.
void write(const std::filesystem::path& dir, const Secret& secret, const Key& key,
           std::string_view serialized, std::span<const std::uint8_t> raw, const Checksum& checksum,
           std::uint64_t bound, Tally& tally);

// Removes the copy for `key_hex`, if any.
void forget(const std::filesystem::path& dir, std::string_view key_hex);

// Removes the temporary files of `dir` that a writer killed mid-write left:
// a copy's ("<key>.tmp-<pid>") whose process is gone, and one of
// replace_file's ("<name>.tmp.XXXXXX", a handover's) older than
// `older_than`. Returns how many it removed.
std::uint64_t remove_leftovers(const std::filesystem::path& dir, std::chrono::seconds older_than);

}  // namespace kcache::store::hot
