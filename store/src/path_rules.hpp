#pragma once
// Who may change what kcache trusts: the rules of the cache directory
// (dir_safety.cpp), of trusted key directories and files, and of packs. A
// location is safe when nobody but root and the effective user can replace
// it: ssh and sudo judge the files and directories above a secret this way.

#include <sys/stat.h>

#include <filesystem>
#include <optional>
#include <string>

namespace kcache::store::files {

// "0755": the permission bits of `mode` as `ls -l` users write them.
std::string octal_mode(mode_t mode);

// Whether `st` belongs to root or to the effective user.
bool owned_by_root_or_us(const struct stat& st);

// A directory above a trusted location that someone else could replace it through.
struct UnsafeAncestor {
    std::filesystem::path dir;
    struct stat st {};
    bool foreign_owner = false;  // else: writable by everyone and not sticky
};

// The first directory above `path` (after symlinks are resolved) that is
// owned by another user than root or the effective user, or writable by
// everyone without the sticky bit (as /tmp has); nullopt when there is none.
std::optional<UnsafeAncestor> unsafe_ancestor(const std::filesystem::path& path);

// What a trusted location is.
enum class Location {
    directory,  // a directory whose files are trusted (trusted keys)
    file,       // a trusted file (a key, a pack)
};

// Why the existing `path` could be replaced or changed by someone other than
// root and the effective user, in a sentence naming the path that is at
// fault; nullopt when it is safe. The location itself (a symlink followed)
// must be owned by root or the user and not writable by group or others; a
// file's directory too, sticky or not (anyone can add files to /tmp); the
// directories above: unsafe_ancestor().
std::optional<std::string> unsafe_location(const std::filesystem::path& path, Location kind);

}  // namespace kcache::store::files
