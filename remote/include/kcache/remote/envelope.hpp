#pragma once
// The remote object format: a self-verifying envelope holding an entry's full
// key fields, its provenance, a payload checksum and the (zstd) payload,
// signed by its writer's key.
// Grammar and checks in envelope.cpp.

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "kcache/common/result.hpp"
#include "kcache/sign/signature.hpp"
#include "kcache/store/trust.hpp"
#include "kcache/store/types.hpp"

namespace kcache::remote {

// Version of the envelope format; a reader refuses any other.
inline constexpr std::uint32_t kEnvelopeVersion = 1;

// An envelope after decoding: fields, provenance and the verified raw bytes.
struct Envelope {
    store::KeyFields fields;
    store::Provenance provenance;
    store::Bytes bytes;
    std::optional<store::KeyId> signer;  // the trusted key whose signature verified
    bool by_builder = false;             // that key is one of ObjectTrust::builders
};

// Whether objects must carry a signature by a trusted key. Under both, a
// signature by a trusted key that does not verify refuses the object.
enum class ObjectSignatures {
    require,          // unsigned objects and signatures by keys not trusted are refused
    accept_unsigned,  // those are used as unsigned objects (the tier before signatures)
};

// What decode_envelope checks a signature against.
struct ObjectTrust {
    ObjectSignatures policy = ObjectSignatures::require;
    const store::TrustedKeys* keys = nullptr;  // nullptr: no key is trusted
    // Keys trusted as builders (Settings::trusted_builders): trusted for
    // signatures as `keys` are, and named in Envelope::by_builder.
    const store::TrustedKeys* builders = nullptr;
};

// Why an object was refused.
enum class EnvelopeErrc {
    malformed,
    too_large,
    wrong_key,
    bad_payload,
    unsigned_object,  // no signature, and the policy requires one
    untrusted_key,    // signed by a key not trusted, and the policy requires a trusted one
    bad_signature,    // a trusted key's signature that does not match the object
};

struct EnvelopeError {
    EnvelopeErrc code;
    std::string message;
};

// Returns the envelope of `raw` (compressed with zstd when that is smaller).
store::Bytes encode_envelope(const store::KeyFields& fields, std::span<const std::uint8_t> raw,
                             const store::Provenance& provenance);

// Returns `object` (an encode_envelope result) with `key`'s signature
// appended; `malformed` naming the cause when OpenSSL cannot sign.
Result<store::Bytes, EnvelopeError> sign_envelope(store::Bytes object, const store::SecretKey& key);

// Decodes `object`, checking every field and size (raw size at most
// `max_raw_bytes`), that the fields hash to `expected`, its signature
// against `trust`, and the payload's frame and XXH3-128 checksum; no byte is
// returned unless all of it holds.
Result<Envelope, EnvelopeError> decode_envelope(std::span<const std::uint8_t> object,
                                                const store::Key& expected,
                                                std::uint64_t max_raw_bytes,
                                                const ObjectTrust& trust);

}  // namespace kcache::remote
