// minisign's text files: reading (every field checked) and writing.
//
// Every file is lines ending in LF (a CR before it is dropped); after the
// lines below only empty lines may follow. A comment line is at most 1024
// bytes (what minisign reads back) and holds no NUL.
//
//   public-key-file := "untrusted comment: " text LF base64(pk) LF
//     pk  := "Ed" key_id:8 public_key:32                             (42 bytes)
//
//   secret-key-file := "untrusted comment: " text LF base64(sk) LF
//     sk  := "Ed" kdf:2 "B2" salt:32 opslimit:8 memlimit:8 secret    (158 bytes)
//     kdf := "Sc" (secret XORed with a scrypt stream: refused as unsupported)
//          | 00 00 (unencrypted, `minisign -G -W`; salt and limits unused)
//     secret := key_id:8 secret_key:64 checksum:32
//     secret_key := seed:32 public_key:32     (public_key must be the seed's)
//     checksum := BLAKE2b-256("Ed" key_id secret_key), or 32 zero bytes
//                 (minisign 0.11 leaves it zero in an unencrypted key)
//
//   signature-file := "untrusted comment: " text LF base64(sig) LF
//                     "trusted comment: " text LF base64(global) LF
//     sig := alg:2 key_id:8 signature:64                             (74 bytes)
//     alg := "ED" (signature over BLAKE2b-512(file)) | "Ed" (over the file)
//     global := Ed25519 signature over signature ‖ trusted-comment-text (64 bytes)
//
// base64 is the standard alphabet with '=' padding, length a multiple of 4.

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "kcache/common/read_file.hpp"
#include "kcache/sign/signature.hpp"
#include "signature_internal.hpp"

namespace kcache::sign {
namespace fs = std::filesystem;
namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::string_view kUntrusted = "untrusted comment: ";
constexpr std::string_view kTrusted = "trusted comment: ";
constexpr std::size_t kSecretBlobBytes = 158;
constexpr std::size_t kMaxFileBytes = 64 * 1024;

Unexpected<SignError> malformed(std::string message) {
    return fail(SignError{SignErrc::malformed, std::move(message)});
}

int base64_value(char c) {
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

// Strict base64: nullopt on a bad length, character or padding.
std::optional<Bytes> base64_decode(std::string_view s) {
    if (s.empty() || s.size() % 4 != 0) {
        return std::nullopt;
    }
    const std::size_t pad = s.ends_with("==") ? 2 : s.ends_with('=') ? 1 : 0;
    Bytes out;
    std::uint32_t acc = 0;
    for (std::size_t i = 0; i < s.size() - pad; ++i) {
        const int v = base64_value(s[i]);
        if (v < 0) {
            return std::nullopt;
        }
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        if (i % 4 == 3) {
            out.push_back(static_cast<std::uint8_t>(acc >> 16));
            out.push_back(static_cast<std::uint8_t>(acc >> 8));
            out.push_back(static_cast<std::uint8_t>(acc));
        }
    }
    if (pad == 2) {
        out.push_back(static_cast<std::uint8_t>(acc >> 4));
    } else if (pad == 1) {
        out.push_back(static_cast<std::uint8_t>(acc >> 10));
        out.push_back(static_cast<std::uint8_t>(acc >> 2));
    }
    return out;
}

std::string base64_encode(const Bytes& data) {
    std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
    const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data.data(),
                                  static_cast<int>(data.size()));
    out.resize(static_cast<std::size_t>(n));
    return out;
}

// The lines of `text` (CR before LF dropped); fails on NUL bytes and on
// anything but empty lines after the first `wanted`.
Result<std::vector<std::string_view>, SignError> split_lines(std::string_view text,
                                                             std::size_t wanted) {
    if (text.find('\0') != std::string_view::npos) {
        return malformed("contains a NUL byte: not a text file");
    }
    std::vector<std::string_view> lines;
    while (!text.empty()) {
        auto end = text.find('\n');
        std::string_view line = text.substr(0, end);
        if (line.ends_with('\r')) {
            line.remove_suffix(1);
        }
        lines.push_back(line);
        text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    }
    for (std::size_t i = wanted; i < lines.size(); ++i) {
        if (!lines[i].empty()) {
            return malformed("line " + std::to_string(i + 1) + ": unexpected text after the " +
                             std::to_string(wanted) + " lines of the file");
        }
    }
    if (lines.size() < wanted) {
        return malformed("line " + std::to_string(lines.size() + 1) +
                         ": missing (the file ends early: truncated?)");
    }
    return lines;
}

// The text after `prefix` on line `n`, checked for minisign's length limit.
Result<std::string, SignError> comment(std::string_view line, std::string_view prefix, int n) {
    if (!line.starts_with(prefix)) {
        return malformed("line " + std::to_string(n) + ": expected \"" + std::string(prefix) +
                         "…\"");
    }
    if (line.size() > kMaxCommentLine) {
        return malformed("line " + std::to_string(n) + ": longer than " +
                         std::to_string(kMaxCommentLine) + " bytes");
    }
    return std::string(line.substr(prefix.size()));
}

// The base64 payload of line `n`, which must decode to `size` bytes.
Result<Bytes, SignError> payload(std::string_view line, std::size_t size, int n, const char* what) {
    auto bytes = base64_decode(line);
    if (!bytes) {
        return malformed("line " + std::to_string(n) + ": not base64");
    }
    if (bytes->size() != size) {
        return malformed("line " + std::to_string(n) + ": " + std::to_string(bytes->size()) +
                         " bytes, " + what + " has " + std::to_string(size));
    }
    return std::move(*bytes);
}

template <std::size_t N>
void copy_to(std::array<std::uint8_t, N>& out, const Bytes& from, std::size_t offset) {
    std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(offset), N, out.begin());
}

Bytes concat(std::initializer_list<std::span<const std::uint8_t>> parts) {
    Bytes out;
    for (auto p : parts) {
        out.insert(out.end(), p.begin(), p.end());
    }
    return out;
}

std::span<const std::uint8_t> text_bytes(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// The secret part of an unencrypted key blob, with every field checked.
Result<SecretKey, SignError> secret_from_blob(const Bytes& b) {
    if (b[2] == 'S' && b[3] == 'c') {
        return fail(SignError{SignErrc::unsupported,
                              "encrypted secret key (scrypt): kcache reads unencrypted keys; "
                              "make one with `kcache keygen` or `minisign -G -W`, or remove the "
                              "password with `minisign -C -W`"});
    }
    if (b[2] != 0 || b[3] != 0) {
        return malformed("line 2: unknown key derivation '" + std::string(1, char(b[2])) +
                         std::string(1, char(b[3])) + "'");
    }
    if (b[4] != 'B' || b[5] != '2') {
        return malformed("line 2: checksum algorithm is not BLAKE2b ('B2')");
    }
    SecretKey key;
    constexpr std::size_t kSecret = 2 + 2 + 2 + 32 + 8 + 8;
    copy_to(key.id, b, kSecret);
    copy_to(key.key, b, kSecret + kKeyIdBytes);
    std::array<std::uint8_t, 32> checksum{};
    copy_to(checksum, b, kSecret + kKeyIdBytes + kSecretKeyBytes);
    const bool zero = std::all_of(checksum.begin(), checksum.end(), [](auto v) { return v == 0; });
    if (!zero && checksum != detail::secret_key_checksum(key)) {
        return malformed("line 2: the key's checksum does not match (damaged key file)");
    }
    auto derived = detail::public_key_of_seed(std::span(key.key).first<32>());
    if (!derived) {
        return fail(SignError{SignErrc::crypto, "OpenSSL cannot derive an Ed25519 public key"});
    }
    if (!std::equal(derived->begin(), derived->end(), key.key.begin() + 32)) {
        return malformed("line 2: the public half does not belong to the secret seed");
    }
    return key;
}

// The checked base64 payload of a two-line key file: `size` bytes starting "Ed".
Result<Bytes, SignError> key_blob(std::string_view text, std::size_t size, const char* what) {
    auto lines = split_lines(text, 2);
    if (!lines) {
        return fail(lines.error());
    }
    if (auto c = comment((*lines)[0], kUntrusted, 1); !c) {
        return fail(c.error());
    }
    auto b = payload((*lines)[1], size, 2, what);
    if (b && ((*b)[0] != 'E' || (*b)[1] != 'd')) {
        return malformed("line 2: signature algorithm is not Ed25519 ('Ed')");
    }
    return b;
}

// Key and signature files go through the bounded reader: a FIFO, a device
// or a directory is refused at once, a file past 64 KiB is not read whole.
Result<std::string, SignError> read_small_file(const fs::path& path) {
    auto text = read_regular_file(path, kMaxFileBytes);
    if (text) {
        return std::move(*text);
    }
    if (text.error().code == ReadErrc::too_large) {
        return malformed(path.string() + ": larger than 64 KiB, not a key or signature file");
    }
    return fail(SignError{SignErrc::io, "cannot be read: " + text.error().message});
}

template <class T>
Result<T, SignError> named(Result<T, SignError> r, const fs::path& path) {
    if (r.ok() || r.error().code == SignErrc::io) {
        return r;
    }
    return fail(SignError{r.error().code, path.string() + ": " + r.error().message});
}

}  // namespace

std::string key_id_hex(const KeyId& id) {
    std::uint64_t v = 0;
    for (std::size_t i = id.size(); i-- > 0;) {
        v = (v << 8) | id[i];
    }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llX", static_cast<unsigned long long>(v));
    return buf;
}

PublicKey SecretKey::public_key() const {
    PublicKey pk;
    pk.id = id;
    std::copy(key.begin() + 32, key.end(), pk.key.begin());
    return pk;
}

const char* to_string(SignErrc code) {
    switch (code) {
        case SignErrc::io:
            return "io";
        case SignErrc::malformed:
            return "malformed";
        case SignErrc::unsupported:
            return "unsupported";
        case SignErrc::wrong_key:
            return "wrong_key";
        case SignErrc::altered_content:
            return "altered_content";
        case SignErrc::altered_comment:
            return "altered_comment";
        case SignErrc::crypto:
            return "crypto";
    }
    return "unknown";
}

Result<PublicKey, SignError> parse_public_key(std::string_view text) {
    auto b = key_blob(text, 2 + kKeyIdBytes + kPublicKeyBytes, "a public key");
    if (!b) {
        return fail(b.error());
    }
    PublicKey key;
    copy_to(key.id, *b, 2);
    copy_to(key.key, *b, 2 + kKeyIdBytes);
    return key;
}

Result<SecretKey, SignError> parse_secret_key(std::string_view text) {
    auto b = key_blob(text, kSecretBlobBytes, "a secret key");
    return b ? secret_from_blob(*b) : fail(b.error());
}

Result<Signature, SignError> parse_signature(std::string_view text) {
    auto lines = split_lines(text, 4);
    if (!lines) {
        return fail(lines.error());
    }
    Signature sig;
    auto untrusted = comment((*lines)[0], kUntrusted, 1);
    auto trusted = comment((*lines)[2], kTrusted, 3);
    if (!untrusted || !trusted) {
        return fail(!untrusted ? untrusted.error() : trusted.error());
    }
    auto b = payload((*lines)[1], 2 + kKeyIdBytes + kSignatureBytes, 2, "a signature");
    if (!b) {
        return fail(b.error());
    }
    if ((*b)[0] != 'E' || ((*b)[1] != 'D' && (*b)[1] != 'd')) {
        return malformed("line 2: signature algorithm is neither 'ED' nor 'Ed'");
    }
    sig.algorithm = (*b)[1] == 'D' ? SignatureAlgorithm::prehashed : SignatureAlgorithm::legacy;
    copy_to(sig.key_id, *b, 2);
    copy_to(sig.signature, *b, 2 + kKeyIdBytes);
    auto global = payload((*lines)[3], kSignatureBytes, 4, "a global signature");
    if (!global) {
        return fail(global.error());
    }
    copy_to(sig.global_signature, *global, 0);
    sig.untrusted_comment = std::move(*untrusted);
    sig.trusted_comment = std::move(*trusted);
    return sig;
}

Result<PublicKey, SignError> read_public_key(const fs::path& path) {
    auto text = read_small_file(path);
    return text ? named(parse_public_key(*text), path) : fail(text.error());
}

Result<SecretKey, SignError> read_secret_key(const fs::path& path) {
    auto text = read_small_file(path);
    return text ? named(parse_secret_key(*text), path) : fail(text.error());
}

Result<Signature, SignError> read_signature(const fs::path& path) {
    auto text = read_small_file(path);
    return text ? named(parse_signature(*text), path) : fail(text.error());
}

std::string format_public_key(const PublicKey& key) {
    const Bytes b = concat({text_bytes("Ed"), key.id, key.key});
    return std::string(kUntrusted) + "minisign public key " + key_id_hex(key.id) + "\n" +
           base64_encode(b) + "\n";
}

std::string format_secret_key(const SecretKey& key) {
    const std::array<std::uint8_t, 32 + 8 + 8> unused{};  // salt and scrypt limits
    const auto checksum = detail::secret_key_checksum(key);
    const Bytes b = concat({text_bytes("Ed"), std::array<std::uint8_t, 2>{}, text_bytes("B2"),
                            unused, key.id, key.key, checksum});
    return std::string(kUntrusted) + "kcache secret key " + key_id_hex(key.id) +
           " (unencrypted, minisign format)\n" + base64_encode(b) + "\n";
}

std::string format_signature(const Signature& sig) {
    const char* alg = sig.algorithm == SignatureAlgorithm::prehashed ? "ED" : "Ed";
    const Bytes b = concat({text_bytes(alg), sig.key_id, sig.signature});
    const Bytes g(sig.global_signature.begin(), sig.global_signature.end());
    return std::string(kUntrusted) + sig.untrusted_comment + "\n" + base64_encode(b) + "\n" +
           std::string(kTrusted) + sig.trusted_comment + "\n" + base64_encode(g) + "\n";
}

fs::path signature_path(const fs::path& file) {
    return fs::path(file.string() + ".minisig");
}

}  // namespace kcache::sign
