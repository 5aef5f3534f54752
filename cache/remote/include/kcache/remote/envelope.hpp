#pragma once
// The remote object format: a self-verifying envelope holding an entry's full
// key fields, its provenance, a payload checksum and the (zstd) payload.
// Grammar and checks in envelope.cpp.

#include <cstdint>
#include <span>
#include <string>

#include "kcache/common/result.hpp"
#include "kcache/store/types.hpp"

namespace kcache::remote {

// Version of the envelope format; a reader refuses any other.
inline constexpr std::uint32_t kEnvelopeVersion = 1;

// An envelope after decoding: fields, provenance and the verified raw bytes.
struct Envelope {
    store::KeyFields fields;
    store::Provenance provenance;
    store::Bytes bytes;
};

// Why an object was refused.
enum class EnvelopeErrc { malformed, too_large, wrong_key, bad_payload };

struct EnvelopeError {
    EnvelopeErrc code;
    std::string message;
};

// Returns the envelope of `raw` (compressed with zstd when that is smaller).
store::Bytes encode_envelope(const store::KeyFields& fields, std::span<const std::uint8_t> raw,
                             const store::Provenance& provenance);

// Decodes `object`, checking every field and size (raw size at most
// `max_raw_bytes`), that the fields hash to `expected`, and the payload's
// frame and XXH3-128 checksum; no byte is returned unless all of it holds.
Result<Envelope, EnvelopeError> decode_envelope(std::span<const std::uint8_t> object,
                                                const store::Key& expected,
                                                std::uint64_t max_raw_bytes);

}  // namespace kcache::remote
