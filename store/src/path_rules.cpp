#include "path_rules.hpp"

#include <unistd.h>

#include <array>
#include <cstdio>

namespace kcache::store::files {
namespace fs = std::filesystem;
namespace {

// Why `st` (of `what`, followed from `via`) lets others change it; nullopt when it does not.
std::optional<std::string> unsafe_itself(const std::string& what, const struct stat& st) {
    if (!owned_by_root_or_us(st)) {
        return what + " is owned by uid " + std::to_string(st.st_uid) +
               ", neither root nor you (uid " + std::to_string(::geteuid()) + ")";
    }
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        return what + " is writable by group or others (mode " + octal_mode(st.st_mode) + ")";
    }
    return std::nullopt;
}

}  // namespace

std::string octal_mode(mode_t mode) {
    std::array<char, 8> buf{};
    std::snprintf(buf.data(), buf.size(), "%04o", static_cast<unsigned>(mode & 07777));
    return buf.data();
}

bool owned_by_root_or_us(const struct stat& st) {
    return st.st_uid == 0 || st.st_uid == ::geteuid();
}

std::optional<UnsafeAncestor> unsafe_ancestor(const fs::path& path) {
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec) {
        return std::nullopt;  // unresolvable paths fail later with their own error
    }
    for (p = p.parent_path();; p = p.parent_path()) {
        struct stat st {};
        if (::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
            if (!owned_by_root_or_us(st)) {
                return UnsafeAncestor{p, st, true};
            }
            if ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0) {
                return UnsafeAncestor{p, st, false};
            }
        }
        if (p == p.root_path() || !p.has_relative_path()) {
            return std::nullopt;
        }
    }
}

std::optional<std::string> unsafe_location(const fs::path& path, Location kind) {
    std::error_code ec;
    const fs::path real = fs::canonical(path, ec);
    struct stat st {};
    if (ec || ::stat(real.c_str(), &st) != 0) {
        return std::nullopt;  // missing or unreadable: reported by whoever reads it
    }
    const std::string via = real == fs::absolute(path, ec) ? "" : " (" + real.string() + ")";
    if (auto why = unsafe_itself(path.string() + via, st)) {
        return why;
    }
    fs::path above = real;
    if (kind == Location::file) {
        above = real.parent_path();
        struct stat dir {};
        if (::stat(above.c_str(), &dir) == 0) {
            if (auto why = unsafe_itself("its directory " + above.string(), dir)) {
                return path.string() + via + ": " + *why + ", so others can replace it";
            }
        }
    }
    if (auto bad = unsafe_ancestor(above)) {
        return path.string() + via + ": the directory above it, " + bad->dir.string() +
               (bad->foreign_owner ? ", is owned by uid " + std::to_string(bad->st.st_uid)
                                   : ", is writable by everyone and not sticky (mode " +
                                         octal_mode(bad->st.st_mode) + ")") +
               ", so others can replace it";
    }
    return std::nullopt;
}

}  // namespace kcache::store::files
