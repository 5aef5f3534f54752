// Hot copies of store entries (layout and format in hot_copies.hpp).

#include "hot_copies.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "kcache/common/fd_io.hpp"
#include "kcache/common/hex.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/common/sha256.hpp"
#include "kcache/common/unique_fd.hpp"
#include "kcache/common/work.hpp"
#include "kcache/sign/signature.hpp"
#include "schema.hpp"

namespace kcache::store::hot {
namespace fs = std::filesystem;
namespace {

constexpr char kMagic[8] = {'K', 'C', 'H', 'O', 'T', '\x02', '\0', '\0'};
constexpr std::size_t kTagOffset = 8 + 8 + 8 + 16;  // the tag covers what comes before it
constexpr std::size_t kTagSize = 32;
constexpr std::size_t kHeaderSize = kTagOffset + kTagSize;
constexpr const char* kStampName = "STAMP";
constexpr const char* kSecretName = "SECRET";

// Version 2: no copy of an imported entry not checked here (version 1 kept
// them). Version 3: copies carry a tag under the directory's secret.
std::string stamp_text() {
    return "kcache hot copies 3, schema " + std::to_string(schema::kCurrentVersion) + "\n";
}

using Tag = Sha256Digest;
static_assert(sizeof(Tag) == kTagSize);

// HMAC-SHA256 (RFC 2104) under `secret` of the header before the tag and
// the key record. Through the tree's SHA-256: OpenSSL's HMAC() costs a
// process about 0.9 ms at its first call, as much as the SQLite open a
// first hit from a copy saves.
Tag tag_of(const Secret& secret, const unsigned char* head, std::string_view serialized) {
    std::array<unsigned char, 64> ipad{}, opad{};
    ipad.fill(0x36);
    opad.fill(0x5c);
    for (std::size_t i = 0; i < secret.size(); ++i) {
        ipad[i] ^= secret[i];
        opad[i] ^= secret[i];
    }
    Sha256 inner;
    inner.update(ipad.data(), ipad.size());
    inner.update(head, kTagOffset);
    inner.update(serialized);
    const Sha256Digest digest = inner.finish();
    Sha256 outer;
    outer.update(opad.data(), opad.size());
    outer.update(digest.data(), digest.size());
    return outer.finish();
}

// Reads the secret of `dir`; false when it has none (or not a sound one).
bool read_secret(const fs::path& dir, Secret& secret) {
    auto text = read_regular_file(dir / kSecretName, 256);
    return text.ok() && text.value().size() == 2 * secret.size() + 1 &&
           text.value().back() == '\n' &&
           parse_hex(std::string_view(text.value()).substr(0, 2 * secret.size()), secret.data(),
                     secret.size());
}

// The secret of `dir`, made now unless it has one; a process that loses the
// race to make it takes the one that won (made once, never replaced).
bool get_or_make_secret(const fs::path& dir, Secret& secret) {
    if (read_secret(dir, secret)) {
        return true;
    }
    Secret fresh{};
    work::add(work::Item::random_draws);
    if (RAND_bytes(fresh.data(), static_cast<int>(fresh.size())) != 1) {
        return false;
    }
    (void)write_text_file(dir / kSecretName, to_hex(fresh) + "\n", 0600, Replace::no);
    return read_secret(dir, secret);
}

// Whether `path` is a directory (not a symlink) of this user closed to others.
bool private_dir(const fs::path& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() &&
           (st.st_mode & 077) == 0;
}

// hot/<inode> for the file `file`, or empty when it cannot be inspected.
fs::path dir_of(const fs::path& store_dir, const fs::path& file) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
        return {};
    }
    return store_dir / "hot" / std::to_string(static_cast<unsigned long long>(st.st_ino));
}

void put_u64(std::string& out, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
        out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    }
}

std::uint64_t get_u64(const unsigned char* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) {
        v = (v << 8) | p[i];
    }
    return v;
}

bool is_key_name(const std::string& name) {
    return name.size() == 64 && std::all_of(name.begin(), name.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

// Scans the copies; when they hold more than `bound` bytes, removes the
// oldest (by modification time) down to 90 % of it, so that the next scan
// is some writes away; `keep` (a key hex) is never removed. Returns the
// bytes left.
std::uint64_t trim_to(const fs::path& dir, std::uint64_t bound, const std::string& keep) {
    struct Copy {
        fs::file_time_type time;
        std::uint64_t size;
        fs::path path;
    };
    std::vector<Copy> copies;
    std::uint64_t total = 0;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        std::error_code e1, e2;
        const auto size = it->file_size(e1);
        const auto time = it->last_write_time(e2);
        if (!is_key_name(name) || e1 || e2) {
            continue;
        }
        total += size;
        if (name != keep) {
            copies.push_back({time, size, it->path()});
        }
    }
    if (total <= bound) {
        return total;
    }
    std::sort(copies.begin(), copies.end(),
              [](const Copy& a, const Copy& b) { return a.time < b.time; });
    const std::uint64_t target = bound / 10 * 9;
    for (const Copy& c : copies) {
        if (total <= target) {
            break;
        }
        if (fs::remove(c.path, ec)) {
            total -= c.size;
        }
    }
    return total;
}

// Whether the header `h` is a copy's for the key record `serialized` and
// `raw_size` bytes.
bool header_fits(const unsigned char* h, std::string_view serialized, std::uint64_t raw_size) {
    return std::memcmp(h, kMagic, sizeof kMagic) == 0 && get_u64(h + 8) == serialized.size() &&
           get_u64(h + 16) == raw_size;
}

// A copy up to this size is read whole before its header is checked, in one
// system call (a hit's every call counts); a larger one's header is read and
// checked first, so that a damaged copy never costs reading all of it.
constexpr std::uint64_t kWholeReadMax = 4u << 20;

// Reads the copy open as `fd` (`st` its status) when its magic, key
// record, size, checksum and tag under `secret` match: header, key record
// and bytes in one read into `memory` (HotBytes), the size of the bytes
// the file's less the header and key record (the header must say the same).
std::optional<Copy> check_and_read(int fd, const struct stat& st, const Secret& secret,
                                   std::string_view serialized, HotBytes::Memory memory) {
    const auto size = static_cast<std::uint64_t>(st.st_size);
    const std::uint64_t head_size = kHeaderSize + serialized.size();
    if (size < head_size || size - head_size > kMaxRawSize) {
        return std::nullopt;
    }
    const std::uint64_t raw_size = size - head_size;
    if (size > kWholeReadMax) {
        unsigned char h[kHeaderSize];
        if (!pread_all(fd, h, sizeof h, 0) || !header_fits(h, serialized, raw_size)) {
            return std::nullopt;
        }
    }
    HotBytes read(head_size, raw_size, memory);
    struct iovec parts[2] = {{read.head().data(), head_size}, {read.room().data(), raw_size}};
    const unsigned char* h = read.head().data();
    const std::string_view record(reinterpret_cast<const char*>(h) + kHeaderSize,
                                  serialized.size());
    if (!preadv_all(fd, parts, 2, 0) || !header_fits(h, serialized, raw_size) ||
        record != serialized) {
        return std::nullopt;
    }
    const Checksum checksum = checksum_of(read.bytes());
    if (std::memcmp(checksum.data(), h + 24, checksum.size()) != 0) {
        return std::nullopt;
    }
    const Tag tag = tag_of(secret, h, serialized);
    if (CRYPTO_memcmp(tag.data(), h + kTagOffset, kTagSize) != 0) {
        return std::nullopt;  // not written by this store
    }
    return Copy{std::move(read), checksum};
}

}  // namespace

fs::path stamped_dir(const fs::path& store_dir, const fs::path& db_path, Secret* secret) {
    fs::path dir = dir_of(store_dir, db_path);
    if (dir.empty() || !private_dir(store_dir / "hot") || !private_dir(dir)) {
        return {};
    }
    auto stamp = read_regular_file(dir / kStampName, 256);
    Secret found{};
    if (!stamp.ok() || stamp.value() != stamp_text() || !read_secret(dir, found)) {
        return {};
    }
    if (secret != nullptr) {
        *secret = found;
    }
    return dir;
}

fs::path set_up(const fs::path& store_dir, const fs::path& db_path, Secret& secret) {
    const fs::path root = store_dir / "hot";
    const fs::path dir = dir_of(store_dir, db_path);
    if (dir.empty()) {
        return {};
    }
    for (const fs::path& d : {root, dir}) {
        if (::mkdir(d.c_str(), 0700) != 0 && errno != EEXIST) {
            return {};
        }
        if (!private_dir(d)) {
            return {};
        }
    }
    std::error_code ec;
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().filename() != dir.filename()) {
            std::error_code ignored;
            fs::remove_all(it->path(), ignored);  // copies of a store file no longer in place
        }
    }
    if (!get_or_make_secret(dir, secret)) {
        return {};
    }
    auto stamp = read_regular_file(dir / kStampName, 256);
    if (stamp.ok() && stamp.value() == stamp_text()) {
        return dir;
    }
    // Copies written under another stamp (none, or an older kcache's rules)
    // are not taken on trust: they go before this stamp is written.
    ec.clear();
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().filename() != kStampName && it->path().filename() != kSecretName) {
            std::error_code ignored;
            fs::remove(it->path(), ignored);
        }
    }
    if (!write_text_file(dir / kStampName, stamp_text(), 0600, Replace::yes).ok()) {
        return {};
    }
    return dir;
}

void unstamp(const fs::path& dir) {
    if (!dir.empty()) {
        ::unlink((dir / kStampName).c_str());
    }
}

void clear_for_new_file(const fs::path& store_dir, const fs::path& new_file) {
    const fs::path dir = dir_of(store_dir, new_file);
    if (!dir.empty() && private_dir(store_dir / "hot")) {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
}

std::uint64_t file_size_for(std::string_view serialized, std::uint64_t raw_size) {
    return kHeaderSize + serialized.size() + raw_size;
}

Found read(const fs::path& dir, const Secret& secret, const Key& key, std::string_view serialized,
           std::uint64_t max_file_size, HotBytes::Memory memory) {
    if (dir.empty()) {
        return {};
    }
    const std::string path = dir.native() + '/' + key.hex();
    work::add(work::Item::files_opened);
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return {};
    }
    if (static_cast<std::uint64_t>(st.st_size) > max_file_size) {
        return {std::nullopt, true, false};
    }
    Found found{check_and_read(fd.get(), st, secret, serialized, memory), false, false};
    found.damaged = !found.copy;
    return found;
}

std::vector<std::string> list(const fs::path& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !dir.empty() && !ec && it != end;
         it.increment(ec)) {
        if (std::string name = it->path().filename().string(); is_key_name(name)) {
            names.push_back(std::move(name));
        }
    }
    return names;
}

bool exists(const fs::path& dir, std::string_view key_hex) {
    struct stat st {};
    return !dir.empty() && ::lstat((dir / key_hex).c_str(), &st) == 0;
}

void write(const fs::path& dir, const Secret& secret, const Key& key, std::string_view serialized,
           std::span<const std::uint8_t> raw, const Checksum& checksum, std::uint64_t bound,
           Tally& tally) {
    const std::uint64_t size = file_size_for(serialized, raw.size());
    if (dir.empty() || size > bound) {
        return;
    }
    std::string head;
    head.reserve(kHeaderSize + serialized.size());
    head.append(kMagic, sizeof kMagic);
    put_u64(head, serialized.size());
    put_u64(head, raw.size());
    head.append(reinterpret_cast<const char*>(checksum.data()), checksum.size());
    const Tag tag = tag_of(secret, reinterpret_cast<const unsigned char*>(head.data()), serialized);
    head.append(reinterpret_cast<const char*>(tag.data()), tag.size());
    head.append(serialized);
    // Renamed into place whole; not synced: a copy lost or torn in a crash
    // fails its checks and the entry answers from the database instead.
    const std::string name = key.hex();
    const fs::path path = dir / name;
    const std::string tmp = path.string() + ".tmp-" + std::to_string(::getpid());
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600));
    bool ok = fd.valid() && write_all(fd.get(), head.data(), head.size()) &&
              write_all(fd.get(), raw.data(), raw.size());
    fd.reset();
    ok = ok && ::rename(tmp.c_str(), path.c_str()) == 0;
    if (!ok) {
        ::unlink(tmp.c_str());
        return;
    }
    tally.bytes += size;
    if (!tally.known || tally.bytes > bound) {
        tally.bytes = trim_to(dir, bound, name);
        tally.known = true;
    }
}

void forget(const fs::path& dir, std::string_view key_hex) {
    if (!dir.empty() && is_key_name(std::string(key_hex))) {
        ::unlink((dir / key_hex).c_str());
    }
}

}  // namespace kcache::store::hot
