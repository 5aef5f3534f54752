#pragma once
// Signatures in minisign's formats (Ed25519; the "ED" algorithm signs the
// BLAKE2b-512 hash of a file), so that Debian's `minisign` verifies what
// kcache signs and kcache verifies what `minisign -S` signs. The file
// grammars are written down in src/signature_format.cpp, which reads them;
// the cryptography (OpenSSL) is in src/signature_crypto.cpp.

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "kcache/common/result.hpp"

namespace kcache::sign {

inline constexpr std::size_t kKeyIdBytes = 8;
inline constexpr std::size_t kPublicKeyBytes = 32;
inline constexpr std::size_t kSecretKeyBytes = 64;  // Ed25519 seed, then the public key
inline constexpr std::size_t kSignatureBytes = 64;
// The longest comment line minisign reads back (prefix included).
inline constexpr std::size_t kMaxCommentLine = 1024;

using KeyId = std::array<std::uint8_t, kKeyIdBytes>;

// Returns the key id as minisign prints it: the 8 bytes read as a
// little-endian number, in 16 upper-case hex digits ("75EE12F03C13259B").
std::string key_id_hex(const KeyId& id);

struct PublicKey {
    KeyId id{};
    std::array<std::uint8_t, kPublicKeyBytes> key{};
};

struct SecretKey {
    KeyId id{};
    std::array<std::uint8_t, kSecretKeyBytes> key{};  // seed (32 bytes), then the public key

    // Returns the public half (the last 32 bytes of `key`) under the same id.
    PublicKey public_key() const;
};

// "ED": Ed25519 over BLAKE2b-512(file), what kcache writes and minisign's
// default; "Ed": Ed25519 over the file itself (minisign -l), read only.
enum class SignatureAlgorithm { prehashed, legacy };

// A parsed .minisig file.
struct Signature {
    SignatureAlgorithm algorithm = SignatureAlgorithm::prehashed;
    KeyId key_id{};
    std::array<std::uint8_t, kSignatureBytes> signature{};         // over the file (or its hash)
    std::string untrusted_comment;                                 // after "untrusted comment: "
    std::string trusted_comment;                                   // after "trusted comment: "
    std::array<std::uint8_t, kSignatureBytes> global_signature{};  // over signature‖trusted
};

enum class SignErrc {
    io,               // a file could not be read or written
    malformed,        // a key or signature file breaks its grammar (message names line and field)
    unsupported,      // well-formed but not readable here (encrypted secret key, other algorithm)
    wrong_key,        // the signature names another key id than the public key given
    altered_content,  // the file does not match the signature (altered, replaced, another file)
    altered_comment,  // the trusted comment does not match the global signature (edited)
    crypto,           // OpenSSL failed (out of memory, no Ed25519 provider)
};

struct SignError {
    SignErrc code;
    std::string message;
};

// Returns a stable lower-case name ("malformed", "altered_content", …).
const char* to_string(SignErrc code);

// Parse the contents of a public key, secret key or signature file; errors
// are `malformed` (naming the line and what is wrong) or `unsupported`.
Result<PublicKey, SignError> parse_public_key(std::string_view text);
Result<SecretKey, SignError> parse_secret_key(std::string_view text);
Result<Signature, SignError> parse_signature(std::string_view text);

// Read and parse a file (at most 64 KiB); errors name `path`, and are `io`
// when it cannot be read.
Result<PublicKey, SignError> read_public_key(const std::filesystem::path& path);
Result<SecretKey, SignError> read_secret_key(const std::filesystem::path& path);
Result<Signature, SignError> read_signature(const std::filesystem::path& path);

// The text of each file, as minisign writes it. A secret key is written
// unencrypted, with its BLAKE2b-256 checksum, as `minisign -G -W` reads it.
std::string format_public_key(const PublicKey& key);
std::string format_secret_key(const SecretKey& key);
std::string format_signature(const Signature& signature);

// Returns a fresh Ed25519 key pair with a random key id; `crypto` on failure.
Result<SecretKey, SignError> generate_key();

// Signs the file at `path` ("ED": its BLAKE2b-512 hash) with `key`. Comments
// must be one line each, and short enough for minisign (`malformed` if not).
Result<Signature, SignError> sign_file(const std::filesystem::path& path, const SecretKey& key,
                                       std::string_view trusted_comment,
                                       std::string_view untrusted_comment);

// Checks `signature` of the file at `path` against `key`: wrong_key,
// altered_content (the file), altered_comment (the trusted comment), io.
Status<SignError> verify_file(const std::filesystem::path& path, const Signature& signature,
                              const PublicKey& key);
// The same check over the file open at `fd` (read from offset 0 with pread,
// so the caller may go on to use exactly the bytes checked); `name` for messages.
Status<SignError> verify_descriptor(int fd, const std::string& name, const Signature& signature,
                                    const PublicKey& key);

// Ed25519 signature of `message` itself (no prehash, no comment) by `key`:
// what a remote object carries; `crypto` when OpenSSL fails.
Result<std::array<std::uint8_t, kSignatureBytes>, SignError> sign_message(
    const SecretKey& key, std::span<const std::uint8_t> message);
// True when `signature` is `key`'s Ed25519 signature of `message`.
bool verify_message(const PublicKey& key, std::span<const std::uint8_t> message,
                    std::span<const std::uint8_t, kSignatureBytes> signature);
// Checks RFC 8032's first Ed25519 example (empty message) and returns
// whether it verifies: OpenSSL's set-up for that check is done once per
// process (about 1 ms, against 0.2 ms for a later check of a 100 KB
// object), so a thread that calls this early takes it off the first check
// a request waits for.
bool warm_up_signature_checks();

// Where the signature of `file` lives: "`file`.minisig".
std::filesystem::path signature_path(const std::filesystem::path& file);

// Whether write_text_file may replace an existing file.
enum class Replace { no, yes };

// Writes `text` to `path` with permission bits `mode`, under a temporary name
// then renamed, so that the file is complete or absent. With Replace::no an
// existing `path` is an `io` error and is left alone.
Status<SignError> write_text_file(const std::filesystem::path& path, std::string_view text,
                                  unsigned mode, Replace replace);

}  // namespace kcache::sign

// The store, the remote tier and their callers name these types and functions
// store:: (packs and remote objects are where signatures are used).
namespace kcache::store {
using namespace kcache::sign;
}  // namespace kcache::store
