#pragma once
// How entry bytes are stored: an optional zstd frame plus an XXH3-128
// checksum of the raw bytes, verified on every read before bytes are returned.

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "kcache/common/result.hpp"
#include "kcache/store/types.hpp"

namespace kcache::store {

// XXH3-128 of the raw bytes, in XXH's canonical (big-endian) byte order.
using Checksum = std::array<std::uint8_t, 16>;

// The largest entry (raw bytes) the store writes or reads back; device
// binaries stay far below it. A row declaring more is corrupt.
inline constexpr std::uint64_t kMaxRawSize = 1ull << 30;

// Returns the XXH3-128 checksum of `raw`.
Checksum checksum_of(std::span<const std::uint8_t> raw);

struct Encoded {
    Codec codec = Codec::none;
    Bytes data;
};

// Returns `raw` as one zstd frame at `level`, with its literals Huffman-coded
// only when `compress_literals`, or unchanged (Codec::none) when zstd does not
// make it smaller (or cannot be set up).
Encoded encode(std::span<const std::uint8_t> raw, int level, bool compress_literals = false);

// Returns the raw bytes of `stored` after checking the frame, the size and
// `checksum`; on any mismatch a `corrupt` error whose message says which
// check failed.
Result<Bytes, StoreError> decode_verified(Codec codec, std::span<const std::uint8_t> stored,
                                          std::uint64_t raw_size,
                                          std::span<const std::uint8_t> checksum);

}  // namespace kcache::store
