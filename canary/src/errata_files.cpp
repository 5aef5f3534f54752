// Errata on disk: the node's accepted errata (<store>/errata/errata.json),
// signed errata files, and the document a pack carries.

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "kcache/canary/errata.hpp"
#include "kcache/common/fd_io.hpp"
#include "kcache/common/fork.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/common/unique_fd.hpp"
#include "kcache/store/pack_errata.hpp"

namespace kcache::errata {
namespace fs = std::filesystem;
using canary::CanaryErrc;
using canary::CanaryError;
namespace {

// An errata document names at most a few thousand errata.
constexpr std::size_t kMaxErrataFileBytes = store::kMaxPackErrataBytes;

fs::path local_file(const fs::path& store_dir) {
    return errata_dir(store_dir) / "errata.json";
}

// The whole regular file open at `fd` (at most the bound), read with pread.
Result<std::string, CanaryError> read_descriptor(int fd, const fs::path& path) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return fail(CanaryError{CanaryErrc::io, path.string() + ": " + std::strerror(errno)});
    }
    if (static_cast<std::uint64_t>(st.st_size) > kMaxErrataFileBytes) {
        return fail(CanaryError{CanaryErrc::damaged, path.string() + ": larger than " +
                                                         std::to_string(kMaxErrataFileBytes) +
                                                         " bytes; not an errata file"});
    }
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    if (!pread_all(fd, text.data(), text.size(), 0)) {
        return fail(CanaryError{CanaryErrc::io,
                                path.string() + ": cannot be read: " + std::strerror(errno)});
    }
    return text;
}

}  // namespace

fs::path errata_dir(const fs::path& store_dir) {
    return store_dir / "errata";
}

Result<std::vector<Erratum>, CanaryError> load_local(const fs::path& store_dir) {
    auto text = read_regular_file(local_file(store_dir), kMaxErrataFileBytes);
    if (!text) {
        if (text.error().code == ReadErrc::not_found) {
            return std::vector<Erratum>();
        }
        return fail(CanaryError{CanaryErrc::io, text.error().message});
    }
    auto errata = from_json(*text);
    if (!errata) {
        return fail(CanaryError{CanaryErrc::damaged,
                                local_file(store_dir).string() + ": " + errata.error().message});
    }
    return std::move(*errata);
}

namespace {

// The node's errata directory, made if missing, locked against this
// process's other threads and the node's other processes while it lives.
struct ErrataLock {
    std::unique_lock<std::mutex> in_process;
    UniqueFd file;
};

Result<ErrataLock, CanaryError> lock_errata(const fs::path& store_dir) {
    // flock is per open file, not per thread; a forked child starts afresh.
    static fork_safety::PerProcess<std::mutex> threads;
    ErrataLock held{std::unique_lock(threads.get()), UniqueFd()};
    const fs::path dir = errata_dir(store_dir);
    (void)::mkdir(store_dir.c_str(), 0700);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        return fail(CanaryError{CanaryErrc::io, dir.string() + ": " + std::strerror(errno)});
    }
    const fs::path lock_path = dir / "lock";
    held.file.reset(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!held.file.valid() || ::flock(held.file.get(), LOCK_EX) != 0) {
        return fail(CanaryError{CanaryErrc::io, lock_path.string() + ": " + std::strerror(errno)});
    }
    return held;
}

// add_local's merge; the caller holds the errata lock.
Result<std::size_t, CanaryError> merge_locked(const fs::path& store_dir,
                                              std::vector<Erratum> errata,
                                              const std::string& source) {
    auto have = load_local(store_dir);
    if (!have) {
        return fail(CanaryError{have.error().code,
                                have.error().message + " (fix or remove it; nothing was added)"});
    }
    for (Erratum& e : errata) {
        e.source = source;
    }
    const std::size_t changed = merge(*have, errata);
    if (changed > 0) {
        auto written = store::write_text_file(local_file(store_dir), to_json(*have), 0600,
                                              store::Replace::yes);
        if (!written) {
            return fail(CanaryError{CanaryErrc::io, written.error().message});
        }
    }
    return changed;
}

}  // namespace

Result<std::size_t, CanaryError> add_local(const fs::path& store_dir, std::vector<Erratum> errata,
                                           const std::string& source) {
    auto lock = lock_errata(store_dir);
    if (!lock) {
        return fail(lock.error());
    }
    return merge_locked(store_dir, std::move(errata), source);
}

Result<std::size_t, CanaryError> add_local_from_feed(const fs::path& store_dir,
                                                     std::vector<Erratum> errata,
                                                     const std::string& source,
                                                     const std::string& feed,
                                                     const FeedStamp& stamp, std::time_t now) {
    auto lock = lock_errata(store_dir);
    if (!lock) {
        return fail(lock.error());
    }
    auto in_force = feeds_in_force(store_dir);
    if (!in_force) {
        return fail(
            CanaryError{in_force.error().code, in_force.error().message + " (nothing was added)"});
    }
    if (auto refused = refusal(*in_force, feed, stamp, now)) {
        return fail(CanaryError{CanaryErrc::refused, *refused});
    }
    auto merged = merge_locked(store_dir, std::move(errata), source);
    if (merged && stamp.version) {
        if (auto recorded = record_in_force(store_dir, feed, stamp, now); !recorded) {
            return fail(CanaryError{CanaryErrc::io, recorded.error()});
        }
    }
    return merged;
}

Result<SignedFile, CanaryError> read_signed_file(const fs::path& path,
                                                 const store::TrustedKeys& keys,
                                                 store::SignaturePolicy policy) {
    auto fd = open_regular_file(path);
    if (!fd) {
        return fail(CanaryError{CanaryErrc::io, fd.error().message});
    }
    SignedFile out;
    out.signature = store::check_pack_signature(fd->get(), path, keys);
    if (out.signature.state == store::SignatureState::invalid) {
        return fail(CanaryError{CanaryErrc::refused,
                                "errata file " + path.string() +
                                    " refused: invalid signature: " + out.signature.detail});
    }
    if (auto refused = store::refusal(out.signature, policy)) {
        return fail(CanaryError{CanaryErrc::refused,
                                "errata file " + path.string() + " refused: " + *refused});
    }
    auto text = read_descriptor(fd->get(), path);
    if (!text) {
        return fail(text.error());
    }
    auto errata = from_json(*text);
    auto stamp = feed_stamp(*text);
    if (!errata || !stamp) {
        return fail(
            CanaryError{CanaryErrc::damaged,
                        path.string() + ": " + (errata ? stamp.error() : errata.error()).message});
    }
    out.errata = std::move(*errata);
    out.stamp = *stamp;
    return out;
}

Status<std::string> write_file(const fs::path& path, const std::vector<Erratum>& errata,
                               const store::SecretKey* key, const FeedStamp& stamp) {
    std::vector<Erratum> plain = errata;
    for (Erratum& e : plain) {
        e.source.clear();  // where this node got it is this node's business
    }
    auto written = store::write_text_file(path, to_json(plain, stamp), 0644, store::Replace::no);
    if (!written) {
        return fail(written.error().message);
    }
    if (key == nullptr) {
        return Ok{};
    }
    auto sig = store::sign_file(path, *key,
                                "kcache errata\terrata:" + std::to_string(plain.size()) +
                                    "\tfile:" + path.filename().string().substr(0, 200),
                                "signature from kcache secret key " + store::key_id_hex(key->id));
    auto sig_written =
        sig ? store::write_text_file(store::signature_path(path), store::format_signature(*sig),
                                     0644, store::Replace::yes)
            : Status<store::SignError>(fail(sig.error()));
    if (!sig_written) {
        std::error_code ec;
        fs::remove(path, ec);  // never an unsigned file where a signed one was asked for
        return fail(sig_written.error().message);
    }
    return Ok{};
}

Result<std::vector<Erratum>, CanaryError> of_pack_document(const fs::path& pack,
                                                           const std::string& document) {
    if (document.empty()) {
        return std::vector<Erratum>();
    }
    auto errata = from_json(document);
    if (!errata) {
        return fail(CanaryError{CanaryErrc::damaged, "pack " + pack.string() + ": its errata: " +
                                                         errata.error().message});
    }
    return std::move(*errata);
}

}  // namespace kcache::errata
