#pragma once
// What identifies one version of a file: its device, inode, size and change
// times. A file replaced by rename gets another inode; one rewritten in
// place another size or mtime, and always another ctime (which no user can
// set back), so a reader that keeps the stamp of what it read knows, by one
// stat(), whether to read again. Two writes within one tick of the kernel's
// clock (a few milliseconds) may leave the same stamp: a reader that must
// not miss such a change re-reads when what it read is refused.

#include <cstdint>
#include <filesystem>

namespace kcache {

struct FileStamp {
    bool exists = false;  // stat() succeeded
    std::uint64_t dev = 0, ino = 0;
    std::int64_t size = 0;
    std::int64_t mtime_ns = 0, ctime_ns = 0;
    bool operator==(const FileStamp&) const = default;
};

// The stamp of `file` (following links); exists == false when stat() fails.
FileStamp stamp_of(const std::filesystem::path& file) noexcept;

}  // namespace kcache
