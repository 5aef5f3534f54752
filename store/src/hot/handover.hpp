#pragma once
// Handed-over write-backs: a Store closed before its deferred SQLite
// connection opened (a process that only hit hot copies) writes what its
// write-back would have written to a file beside its hot copies instead of
// opening SQLite to write it at the close; the next writable open of the
// connection, in whichever process, takes the files in and writes them back
// (docs/design.md, "Hot copies").
//
//   hot/<inode of store.sqlite>/writeback-<pid>-<ns>
//
// Text, written to a temporary name and renamed, so a reader sees it whole:
//   kcache write-back 1
//   hit <key hex> <last use, ms since the epoch> <hits>
//   copy <key hex> <XXH3-128 of the bytes the copy answered with, hex; "-": it failed its check>
//   count hits <n>
//   count miss <MissReason index> <n>
// A reader claims a file by renaming it (so no two take the same one), and
// removes it once read; one it cannot read or parse is removed with a warning
// (only counts are lost: the entries themselves are SQLite's).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kcache/store/codec.hpp"
#include "kcache/store/types.hpp"

namespace kcache::store::hot {

struct Handover {
    struct Hit {
        std::string key_hex;
        TimeMs last_use = 0;
        std::uint64_t hits = 0;
    };
    std::vector<Hit> hits;
    // Copies that answered before the connection opened, to check against
    // their entries; nullopt: the copy failed its check.
    std::vector<std::pair<std::string, std::optional<Checksum>>> copies;
    TierStats counts;  // hits and misses of the user store
};

// At most this many files wait in one directory: a close that finds as many
// writes back through SQLite itself (which takes them all in).
inline constexpr std::size_t kMaxHandovers = 64;

// The file's text for `h`, and back; nullopt for a text that is not one.
std::string handover_text(const Handover& h);
std::optional<Handover> parse_handover(std::string_view text);

// Writes `h` into `dir` (the hot copies' directory); false when it could
// not (nothing is left behind then).
bool write_handover(const std::filesystem::path& dir, const Handover& h);

// How many files wait in `dir`, counting up to kMaxHandovers.
std::size_t count_handovers(const std::filesystem::path& dir);

// Claims, reads and removes every file waiting in `dir` (and those claimed
// by a process that no longer runs); those that do not parse are removed
// with a warning.
std::vector<Handover> take_handovers(const std::filesystem::path& dir);

}  // namespace kcache::store::hot
