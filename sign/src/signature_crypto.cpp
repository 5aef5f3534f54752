// The cryptography of minisign signatures through OpenSSL: Ed25519 keys,
// signing and verifying, BLAKE2b-512 file hashes; and writing key and
// signature files so that they are complete or absent.

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "kcache/common/fd_io.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/common/unique_fd.hpp"
#include "kcache/sign/signature.hpp"
#include "signature_internal.hpp"

namespace kcache::sign {
namespace fs = std::filesystem;
namespace {

struct PkeyFree {
    void operator()(EVP_PKEY* p) const noexcept { EVP_PKEY_free(p); }
};
struct MdCtxFree {
    void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
};
struct PkeyCtxFree {
    void operator()(EVP_PKEY_CTX* c) const noexcept { EVP_PKEY_CTX_free(c); }
};
using Pkey = std::unique_ptr<EVP_PKEY, PkeyFree>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, MdCtxFree>;

Unexpected<SignError> crypto_error(const std::string& what) {
    return fail(SignError{SignErrc::crypto, "OpenSSL failed to " + what});
}

using Digest = std::array<std::uint8_t, 64>;

// BLAKE2b-512 of the whole file open at `fd` (read from offset 0, in 1 MiB
// pieces, so that the descriptor's position does not matter); `name` for errors.
Result<Digest, SignError> hash_file(int fd, const std::string& name) {
    MdCtx ctx(EVP_MD_CTX_new());
    if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_blake2b512(), nullptr) != 1) {
        return crypto_error("start a BLAKE2b-512 hash");
    }
    std::vector<char> buf(1 << 20);
    for (off_t at = 0;;) {
        const ssize_t n = ::pread(fd, buf.data(), buf.size(), at);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return fail(SignError{SignErrc::io, name + ": read error: " + std::strerror(errno)});
        }
        if (n == 0) {
            break;
        }
        EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(n));
        at += n;
    }
    Digest d{};
    unsigned int n = 0;
    if (EVP_DigestFinal_ex(ctx.get(), d.data(), &n) != 1 || n != d.size()) {
        return crypto_error("finish a BLAKE2b-512 hash");
    }
    return d;
}

// The bytes an "ED" signature covers (the hash) or an "Ed" one (the file),
// of the file open at `fd`.
Result<std::vector<std::uint8_t>, SignError> signed_message(int fd, const std::string& name,
                                                            SignatureAlgorithm alg) {
    if (alg == SignatureAlgorithm::prehashed) {
        auto d = hash_file(fd, name);
        return d ? Result<std::vector<std::uint8_t>, SignError>(
                       std::vector<std::uint8_t>(d->begin(), d->end()))
                 : fail(d.error());
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return fail(SignError{SignErrc::io, name + ": cannot be read"});
    }
    std::vector<std::uint8_t> all(static_cast<std::size_t>(st.st_size));
    if (!all.empty() && !pread_all(fd, all.data(), all.size(), 0)) {
        return fail(SignError{SignErrc::io, name + ": cannot be read"});
    }
    return all;
}

// Opens the regular file at `path` for signing or verifying.
Result<UniqueFd, SignError> open_signed_file(const fs::path& path) {
    auto fd = open_regular_file(path);
    if (!fd) {
        return fail(SignError{SignErrc::io, "cannot be read: " + fd.error().message});
    }
    return std::move(*fd);
}

Result<std::array<std::uint8_t, kSignatureBytes>, SignError> ed25519_sign(
    const SecretKey& key, std::span<const std::uint8_t> message) {
    Pkey pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, key.key.data(), 32));
    MdCtx ctx(EVP_MD_CTX_new());
    std::array<std::uint8_t, kSignatureBytes> sig{};
    std::size_t len = sig.size();
    if (!pkey || !ctx ||
        EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) != 1 ||
        EVP_DigestSign(ctx.get(), sig.data(), &len, message.data(), message.size()) != 1 ||
        len != sig.size()) {
        return crypto_error("make an Ed25519 signature");
    }
    return sig;
}

// True when `sig` is `key`'s signature of `message`.
bool ed25519_verify(const PublicKey& key, std::span<const std::uint8_t> message,
                    const std::array<std::uint8_t, kSignatureBytes>& sig) {
    Pkey pkey(
        EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr, key.key.data(), key.key.size()));
    MdCtx ctx(EVP_MD_CTX_new());
    return pkey && ctx &&
           EVP_DigestVerifyInit(ctx.get(), nullptr, nullptr, nullptr, pkey.get()) == 1 &&
           EVP_DigestVerify(ctx.get(), sig.data(), sig.size(), message.data(), message.size()) == 1;
}

// signature ‖ trusted comment: what the global signature covers.
std::vector<std::uint8_t> global_message(const Signature& sig) {
    std::vector<std::uint8_t> m(sig.signature.begin(), sig.signature.end());
    m.insert(m.end(), sig.trusted_comment.begin(), sig.trusted_comment.end());
    return m;
}

bool one_line(std::string_view s) {
    return s.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

}  // namespace

namespace detail {

std::optional<std::array<std::uint8_t, kPublicKeyBytes>> public_key_of_seed(
    std::span<const std::uint8_t, 32> seed) {
    Pkey pkey(EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed.data(), seed.size()));
    std::array<std::uint8_t, kPublicKeyBytes> pk{};
    std::size_t len = pk.size();
    if (!pkey || EVP_PKEY_get_raw_public_key(pkey.get(), pk.data(), &len) != 1 ||
        len != pk.size()) {
        return std::nullopt;
    }
    return pk;
}

std::array<std::uint8_t, 32> secret_key_checksum(const SecretKey& key) {
    std::vector<std::uint8_t> in = {'E', 'd'};
    in.insert(in.end(), key.id.begin(), key.id.end());
    in.insert(in.end(), key.key.begin(), key.key.end());
    const auto d = blake2b(in, 32);
    std::array<std::uint8_t, 32> out{};
    std::copy(d.begin(), d.end(), out.begin());
    return out;
}

}  // namespace detail

Result<SecretKey, SignError> generate_key() {
    std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> ctx(EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, nullptr));
    EVP_PKEY* raw = nullptr;
    if (!ctx || EVP_PKEY_keygen_init(ctx.get()) != 1 || EVP_PKEY_keygen(ctx.get(), &raw) != 1) {
        return crypto_error("generate an Ed25519 key");
    }
    Pkey pkey(raw);
    SecretKey key;
    std::size_t seed_len = 32;
    std::size_t pk_len = 32;
    if (EVP_PKEY_get_raw_private_key(pkey.get(), key.key.data(), &seed_len) != 1 ||
        EVP_PKEY_get_raw_public_key(pkey.get(), key.key.data() + 32, &pk_len) != 1 ||
        seed_len != 32 || pk_len != 32 || RAND_bytes(key.id.data(), key.id.size()) != 1) {
        return crypto_error("export an Ed25519 key");
    }
    return key;
}

Result<std::array<std::uint8_t, kSignatureBytes>, SignError> sign_message(
    const SecretKey& key, std::span<const std::uint8_t> message) {
    return ed25519_sign(key, message);
}

bool verify_message(const PublicKey& key, std::span<const std::uint8_t> message,
                    std::span<const std::uint8_t, kSignatureBytes> signature) {
    std::array<std::uint8_t, kSignatureBytes> sig{};
    std::copy(signature.begin(), signature.end(), sig.begin());
    return ed25519_verify(key, message, sig);
}

bool warm_up_signature_checks() {
    // RFC 8032, section 7.1, TEST 1.
    static constexpr std::array<std::uint8_t, kPublicKeyBytes> kKey{
        0xd7, 0x5a, 0x98, 0x01, 0x82, 0xb1, 0x0a, 0xb7, 0xd5, 0x4b, 0xfe,
        0xd3, 0xc9, 0x64, 0x07, 0x3a, 0x0e, 0xe1, 0x72, 0xf3, 0xda, 0xa6,
        0x23, 0x25, 0xaf, 0x02, 0x1a, 0x68, 0xf7, 0x07, 0x51, 0x1a};
    static constexpr std::array<std::uint8_t, kSignatureBytes> kSignature{
        0xe5, 0x56, 0x43, 0x00, 0xc3, 0x60, 0xac, 0x72, 0x90, 0x86, 0xe2, 0xcc, 0x80,
        0x6e, 0x82, 0x8a, 0x84, 0x87, 0x7f, 0x1e, 0xb8, 0xe5, 0xd9, 0x74, 0xd8, 0x73,
        0xe0, 0x65, 0x22, 0x49, 0x01, 0x55, 0x5f, 0xb8, 0x82, 0x15, 0x90, 0xa3, 0x3b,
        0xac, 0xc6, 0x1e, 0x39, 0x70, 0x1c, 0xf9, 0xb4, 0x6b, 0xd2, 0x5b, 0xf5, 0xf0,
        0x59, 0x5b, 0xbe, 0x24, 0x65, 0x51, 0x41, 0x43, 0x8e, 0x7a, 0x10, 0x0b};
    PublicKey key{};
    key.key = kKey;
    static constexpr std::uint8_t kEmpty[1] = {0};
    return ed25519_verify(key, std::span<const std::uint8_t>(kEmpty, 0), kSignature);
}

Result<Signature, SignError> sign_file(const fs::path& path, const SecretKey& key,
                                       std::string_view trusted_comment,
                                       std::string_view untrusted_comment) {
    const std::size_t longest =
        std::max(trusted_comment.size() + 17, untrusted_comment.size() + 19);
    if (!one_line(trusted_comment) || !one_line(untrusted_comment) || longest > kMaxCommentLine) {
        return fail(SignError{SignErrc::malformed,
                              "a comment must be one line of at most about 1000 bytes"});
    }
    Signature sig;
    sig.algorithm = SignatureAlgorithm::prehashed;
    sig.key_id = key.id;
    sig.trusted_comment = trusted_comment;
    sig.untrusted_comment = untrusted_comment;
    auto fd = open_signed_file(path);
    auto message = fd ? signed_message(fd->get(), path.string(), sig.algorithm)
                      : Result<std::vector<std::uint8_t>, SignError>(fail(fd.error()));
    if (!message) {
        return fail(message.error());
    }
    auto s = ed25519_sign(key, *message);
    if (!s) {
        return fail(s.error());
    }
    sig.signature = *s;
    auto g = ed25519_sign(key, global_message(sig));
    if (!g) {
        return fail(g.error());
    }
    sig.global_signature = *g;
    return sig;
}

Status<SignError> verify_file(const fs::path& path, const Signature& sig, const PublicKey& key) {
    auto fd = open_signed_file(path);
    return fd ? verify_descriptor(fd->get(), path.string(), sig, key) : fail(fd.error());
}

Status<SignError> verify_descriptor(int fd, const std::string& name, const Signature& sig,
                                    const PublicKey& key) {
    if (sig.key_id != key.id) {
        return fail(SignError{SignErrc::wrong_key, "signed by key " + key_id_hex(sig.key_id) +
                                                       ", not by key " + key_id_hex(key.id)});
    }
    auto message = signed_message(fd, name, sig.algorithm);
    if (!message) {
        return fail(message.error());
    }
    if (!ed25519_verify(key, *message, sig.signature)) {
        return fail(SignError{SignErrc::altered_content,
                              name + " does not match its signature: the file was altered or "
                                     "replaced after signing, or the signature is of another "
                                     "file"});
    }
    if (!ed25519_verify(key, global_message(sig), sig.global_signature)) {
        return fail(SignError{SignErrc::altered_comment,
                              "the trusted comment does not match its global signature: it was "
                              "edited after signing"});
    }
    return Ok{};
}

Status<SignError> write_text_file(const fs::path& path, std::string_view text, unsigned mode,
                                  Replace replace) {
    auto io = [&](const std::string& what) -> Status<SignError> {
        return fail(SignError{SignErrc::io, path.string() + ": " + what});
    };
    std::error_code ec;
    if (replace == Replace::no && fs::symlink_status(path, ec).type() != fs::file_type::not_found) {
        return io("exists; remove it first");
    }
    const fs::path tmp = path.string() + ".tmp-" + std::to_string(::getpid());
    fs::remove(tmp, ec);
    UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
    if (!fd.valid()) {
        return io("cannot create " + tmp.string());
    }
    bool ok = ::fchmod(fd.get(), mode) == 0;  // the umask may have narrowed `mode`
    ok = ok && write_all(fd.get(), text.data(), text.size());
    ok = ok && ::fsync(fd.get()) == 0;
    fd.reset();
    // link() fails when `path` exists, so Replace::no never overwrites a file
    // that appeared since the check above.
    ok = ok && (replace == Replace::yes ? ::rename(tmp.c_str(), path.c_str())
                                        : ::link(tmp.c_str(), path.c_str())) == 0;
    fs::remove(tmp, ec);
    return ok ? Status<SignError>(Ok{}) : io("cannot be written");
}

}  // namespace kcache::sign
