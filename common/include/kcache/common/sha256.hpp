#pragma once
// The one SHA-256 of the tree (keys, source digests, compiler identities).

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace kcache {

using Sha256Digest = std::array<std::uint8_t, 32>;

// Incremental SHA-256. Plain memory: no call can fail.
class Sha256 {
  public:
    Sha256();
    void update(const void* data, std::size_t n);
    void update(std::string_view s) { update(s.data(), s.size()); }
    // Returns the digest; the object must not be updated afterwards.
    Sha256Digest finish();

  private:
    // Storage for OpenSSL's SHA256_CTX (112 bytes on every supported ABI; the
    // .cpp checks the size), so that this header does not pull in OpenSSL.
    alignas(8) unsigned char ctx_[128];
};

// Returns the SHA-256 of `data`.
Sha256Digest sha256(std::string_view data);

// Returns the lower-case hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);

// Returns the lower-case hex SHA-256 of the regular file at `path`, or
// nullopt when it cannot be read or is not a regular file (read_file.hpp).
std::optional<std::string> sha256_file_hex(const std::filesystem::path& path);

}  // namespace kcache
