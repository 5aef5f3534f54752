#pragma once
// What the signature format code needs from the cryptography code, and the
// private BLAKE2b used for minisign's secret-key checksum.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kcache/sign/signature.hpp"

namespace kcache::sign::detail {

// BLAKE2b (unkeyed) of `data` with an output of `out_len` bytes (1..64).
// OpenSSL 3.0 offers only the 64-byte digest (EVP_blake2b512) and a keyed
// MAC that refuses an empty key, while minisign's secret-key checksum is the
// unkeyed 32-byte digest; this follows RFC 7693.
std::vector<std::uint8_t> blake2b(std::span<const std::uint8_t> data, std::size_t out_len);

// The Ed25519 public key of the 32-byte `seed`; nullopt when OpenSSL fails.
std::optional<std::array<std::uint8_t, kPublicKeyBytes>> public_key_of_seed(
    std::span<const std::uint8_t, 32> seed);

// The checksum minisign stores in a secret key file:
// BLAKE2b-256("Ed" ‖ key id ‖ secret key).
std::array<std::uint8_t, 32> secret_key_checksum(const SecretKey& key);

}  // namespace kcache::sign::detail
