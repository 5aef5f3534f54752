// The remote object format. Every integer is little-endian; every variable
// part is length-prefixed and capped, and the object ends exactly where the
// payload does (trailing bytes are refused).
//
//   object    = body signature?
//   body      = magic version fields provenance payload
//   magic     = "kcache.obj"             ; 10 bytes, no terminator
//   version   = u32                      ; kEnvelopeVersion (1)
//   fields    = key_version:u32 kernel_name:str source_digest:str
//               entry_points:list build_options:str target_format:str
//               vendor_id:u32 device_name:str pci_device_id:u32 ip_version:u32
//               driver_version:str platform_name:str platform_version:str
//               opencl_c_version:str address_bits:u32 device_uuid:str
//               driver_uuid:str compiler_id:str
//   provenance= producer_version:str origin:u8 build_time_ms:u64 build_log:str
//   payload   = codec:u8 raw_size:u64 checksum:byte{16} size:u64 byte{size}
//   str       = len:u32 byte{len}        ; len <= 1 MiB
//   list      = count:u32 str{count}     ; count <= 4096
//   u8/u32/u64= 1/4/8 bytes
//
//   origin: 0 jit, 1 aot, 2 import.   codec: 0 none, 1 zstd (one frame).
//   checksum: XXH3-128 of the raw bytes (the store's checksum).
//
//   signature = sig_magic key_id:byte{8} ed25519:byte{64}
//   sig_magic = "kcache.sig"             ; 10 bytes, no terminator
//   key_id: the writer's minisign key id (`kcache keygen`, as packs).
//   ed25519: pure Ed25519 by that key over `body`, every byte before
//   sig_magic. The body holds the key fields, so a signature vouches for
//   the payload only under the key those fields hash to.
//
// Checks on read, in order: magic, version, every length against the bytes
// left and its cap, origin and codec in range, raw_size <= the caller's cap,
// nothing after the payload but one whole signature, make_key(fields) == the
// requested key, the signature against the trusted keys and the policy
// (check_signature below), and only then the frame, the declared size and
// the checksum (store::decode_verified): no payload byte is decompressed,
// let alone returned, before the signature holds.

#include "kcache/remote/envelope.hpp"

#include <algorithm>
#include <string_view>

#include "kcache/sign/signature.hpp"
#include "kcache/store/codec.hpp"
#include "kcache/store/key.hpp"

namespace kcache::remote {
namespace {

constexpr std::string_view kMagic = "kcache.obj";
constexpr std::string_view kSigMagic = "kcache.sig";
constexpr std::size_t kSignatureBlock =
    kSigMagic.size() + store::kKeyIdBytes + store::kSignatureBytes;
constexpr std::uint32_t kMaxString = 1u << 20;
constexpr std::uint32_t kMaxList = 4096;
constexpr int kZstdLevel = 3;

class Writer {
  public:
    void u8(std::uint8_t v) { out_.push_back(v); }
    void u32(std::uint32_t v) { le(v, 4); }
    void u64(std::uint64_t v) { le(v, 8); }
    void bytes(std::span<const std::uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
    void str(std::string_view s) {
        u32(static_cast<std::uint32_t>(s.size()));
        out_.insert(out_.end(), s.begin(), s.end());
    }
    store::Bytes take() { return std::move(out_); }

  private:
    void le(std::uint64_t v, int n) {
        for (int i = 0; i < n; ++i) {
            out_.push_back(static_cast<std::uint8_t>((v >> (8 * i)) & 0xff));
        }
    }
    store::Bytes out_;
};

// Reads fields in order; the first failure sticks and names the field.
class Reader {
  public:
    explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
    bool ok() const { return error_.empty(); }
    const std::string& error() const { return error_; }
    std::size_t left() const { return in_.size() - pos_; }

    std::uint64_t uint(int n, const char* what) {
        if (!need(static_cast<std::size_t>(n), what)) {
            return 0;
        }
        std::uint64_t v = 0;
        for (int i = 0; i < n; ++i) {
            v |= static_cast<std::uint64_t>(in_[pos_ + i]) << (8 * i);
        }
        pos_ += static_cast<std::size_t>(n);
        return v;
    }
    std::uint32_t u32(const char* what) { return static_cast<std::uint32_t>(uint(4, what)); }
    std::span<const std::uint8_t> raw(std::uint64_t n, const char* what) {
        if (!need(n, what)) {
            return {};
        }
        auto s = in_.subspan(pos_, static_cast<std::size_t>(n));
        pos_ += static_cast<std::size_t>(n);
        return s;
    }
    std::string str(const char* what) {
        std::uint32_t n = u32(what);
        if (ok() && n > kMaxString) {
            fail(std::string(what) + ": length " + std::to_string(n) + " over the 1 MiB cap");
        }
        auto s = raw(n, what);
        return std::string(s.begin(), s.end());
    }
    void fail(std::string why) {
        if (error_.empty()) {
            error_ = std::move(why);
        }
    }

  private:
    bool need(std::uint64_t n, const char* what) {
        if (!ok()) {
            return false;
        }
        if (n > left()) {
            fail(std::string("truncated at ") + what + " (" + std::to_string(left()) +
                 " bytes left)");
            return false;
        }
        return true;
    }
    std::span<const std::uint8_t> in_;
    std::size_t pos_ = 0;
    std::string error_;
};

void write_fields(Writer& w, const store::KeyFields& f) {
    w.u32(f.key_version);
    w.str(f.kernel_name);
    w.str(f.source_digest);
    w.u32(static_cast<std::uint32_t>(f.entry_points.size()));
    for (const auto& e : f.entry_points) {
        w.str(e);
    }
    w.str(f.build_options);
    w.str(f.target_format);
    w.u32(f.vendor_id);
    w.str(f.device_name);
    w.u32(f.pci_device_id);
    w.u32(f.ip_version);
    for (const std::string* s :
         {&f.driver_version, &f.platform_name, &f.platform_version, &f.opencl_c_version}) {
        w.str(*s);
    }
    w.u32(f.address_bits);
    w.str(f.device_uuid);
    w.str(f.driver_uuid);
    w.str(f.compiler_id);
}

store::KeyFields read_fields(Reader& r) {
    store::KeyFields f;
    f.key_version = r.u32("key_version");
    f.kernel_name = r.str("kernel_name");
    f.source_digest = r.str("source_digest");
    std::uint32_t n = r.u32("entry_points");
    if (r.ok() && n > kMaxList) {
        r.fail("entry_points: " + std::to_string(n) + " names, over the cap of 4096");
    }
    for (std::uint32_t i = 0; i < n && r.ok(); ++i) {
        f.entry_points.push_back(r.str("entry_point"));
    }
    f.build_options = r.str("build_options");
    f.target_format = r.str("target_format");
    f.vendor_id = r.u32("vendor_id");
    f.device_name = r.str("device_name");
    f.pci_device_id = r.u32("pci_device_id");
    f.ip_version = r.u32("ip_version");
    f.driver_version = r.str("driver_version");
    f.platform_name = r.str("platform_name");
    f.platform_version = r.str("platform_version");
    f.opencl_c_version = r.str("opencl_c_version");
    f.address_bits = r.u32("address_bits");
    f.device_uuid = r.str("device_uuid");
    f.driver_uuid = r.str("driver_uuid");
    f.compiler_id = r.str("compiler_id");
    return f;
}

Unexpected<EnvelopeError> refuse(EnvelopeErrc code, std::string message) {
    return fail(EnvelopeError{code, std::move(message)});
}

std::span<const std::uint8_t> as_bytes(std::string_view s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// The signature block that ends `object`, if it has one (the reader has
// checked that nothing else follows the payload).
struct SignatureBlock {
    store::KeyId key_id{};
    std::span<const std::uint8_t, store::kSignatureBytes> signature;
};

// Who signed an object: the trusted key whose signature verified, and
// whether it is a builder's.
struct Signer {
    store::KeyId id{};
    bool builder = false;
};

// Checks the signature (`block`, over `body`) against `trust`; returns the
// signer when a trusted key's signature verified, nullopt for an object
// used unsigned (only under ObjectSignatures::accept_unsigned).
Result<std::optional<Signer>, EnvelopeError> check_signature(
    std::span<const std::uint8_t> body, const std::optional<SignatureBlock>& block,
    const ObjectTrust& trust) {
    const bool required = trust.policy == ObjectSignatures::require;
    if (!block) {
        if (required) {
            return refuse(EnvelopeErrc::unsigned_object,
                          "unsigned object, and this node takes only objects signed by a trusted "
                          "key (KCACHE_REMOTE_REQUIRE_SIGNED): the writer signs with "
                          "KCACHE_REMOTE_SIGNING_KEY, readers trust its .pub (trusted.d or "
                          "KCACHE_TRUSTED_KEYS)");
        }
        return std::optional<Signer>();
    }
    const std::string signer = store::key_id_hex(block->key_id);
    // Builders first: a key named both ways is a builder's.
    std::vector<std::pair<const store::TrustedKey*, bool>> keys;
    for (const auto& [set, builder] : {std::pair{trust.builders, true}, {trust.keys, false}}) {
        for (const store::TrustedKey* k :
             set ? set->matching(block->key_id) : std::vector<const store::TrustedKey*>{}) {
            keys.emplace_back(k, builder);
        }
    }
    if (keys.empty()) {
        if (required) {
            return refuse(EnvelopeErrc::untrusted_key,
                          "signed by key " + signer +
                              ", which this node does not trust (put its .pub in trusted.d or "
                              "KCACHE_TRUSTED_KEYS)");
        }
        return std::optional<Signer>();
    }
    for (const auto& [k, builder] : keys) {
        if (store::verify_message(k->key, body, block->signature)) {
            return std::optional<Signer>(Signer{block->key_id, builder});
        }
    }
    return refuse(EnvelopeErrc::bad_signature,
                  "the signature of trusted key " + signer +
                      " does not match the object: it was altered after signing");
}

}  // namespace

Result<store::Bytes, EnvelopeError> sign_envelope(store::Bytes object,
                                                  const store::SecretKey& key) {
    auto sig = store::sign_message(key, object);
    if (!sig) {
        return refuse(EnvelopeErrc::malformed, "cannot sign the object: " + sig.error().message);
    }
    object.insert(object.end(), kSigMagic.begin(), kSigMagic.end());
    object.insert(object.end(), key.id.begin(), key.id.end());
    object.insert(object.end(), sig->begin(), sig->end());
    return object;
}

store::Bytes encode_envelope(const store::KeyFields& fields, std::span<const std::uint8_t> raw,
                             const store::Provenance& provenance) {
    Writer w;
    w.bytes(as_bytes(kMagic));
    w.u32(kEnvelopeVersion);
    write_fields(w, store::normalized(fields));
    w.str(provenance.producer_version);
    w.u8(static_cast<std::uint8_t>(provenance.origin));
    w.u64(static_cast<std::uint64_t>(provenance.build_time_ms));
    w.str(std::string_view(provenance.build_log).substr(0, kMaxString));
    const store::Encoded enc = store::encode(raw, kZstdLevel);
    w.u8(static_cast<std::uint8_t>(enc.codec));
    w.u64(raw.size());
    w.bytes(store::checksum_of(raw));
    w.u64(enc.data.size());
    w.bytes(enc.data);
    return w.take();
}

Result<Envelope, EnvelopeError> decode_envelope(std::span<const std::uint8_t> object,
                                                const store::Key& expected,
                                                std::uint64_t max_raw_bytes,
                                                const ObjectTrust& trust) {
    Reader r(object);
    auto magic = r.raw(kMagic.size(), "magic");
    if (!r.ok() ||
        std::string_view(reinterpret_cast<const char*>(magic.data()), magic.size()) != kMagic) {
        return refuse(EnvelopeErrc::malformed, "not a kcache object (bad magic)");
    }
    if (auto v = r.u32("version"); r.ok() && v != kEnvelopeVersion) {
        return refuse(EnvelopeErrc::malformed,
                      "envelope version " + std::to_string(v) + ", this kcache reads version 1");
    }
    Envelope env;
    env.fields = read_fields(r);
    env.provenance.producer_version = r.str("producer_version");
    const auto origin = r.uint(1, "origin");
    env.provenance.build_time_ms = static_cast<store::TimeMs>(r.uint(8, "build_time_ms"));
    env.provenance.build_log = r.str("build_log");
    const auto codec = r.uint(1, "codec");
    const auto raw_size = r.uint(8, "raw_size");
    auto checksum = r.raw(16, "checksum");
    const auto size = r.uint(8, "payload size");
    if (r.ok() && (origin > 2 || codec > 1)) {
        r.fail("origin " + std::to_string(origin) + " or codec " + std::to_string(codec) +
               " out of range");
    }
    if (r.ok() && raw_size > max_raw_bytes) {
        return refuse(EnvelopeErrc::too_large, "payload of " + std::to_string(raw_size) +
                                                   " bytes over the cap of " +
                                                   std::to_string(max_raw_bytes));
    }
    auto payload = r.raw(size, "payload");
    const std::size_t body_size = object.size() - r.left();
    std::optional<SignatureBlock> block;
    if (r.ok() && r.left() == kSignatureBlock &&
        std::ranges::equal(object.subspan(body_size, kSigMagic.size()), as_bytes(kSigMagic))) {
        auto id = object.subspan(body_size + kSigMagic.size(), store::kKeyIdBytes);
        block = SignatureBlock{{}, object.last<store::kSignatureBytes>()};
        std::copy(id.begin(), id.end(), block->key_id.begin());
    } else if (r.ok() && r.left() != 0) {
        r.fail(std::to_string(r.left()) + " bytes after the payload, not a signature");
    }
    if (!r.ok()) {
        return refuse(EnvelopeErrc::malformed, "malformed envelope: " + r.error());
    }
    env.provenance.origin = static_cast<store::Origin>(origin);
    if (store::make_key(env.fields) != expected) {
        return refuse(EnvelopeErrc::wrong_key, "the object's fields hash to " +
                                                   store::make_key(env.fields).hex() +
                                                   ", not the requested key");
    }
    auto signer = check_signature(object.first(body_size), block, trust);
    if (!signer) {
        return fail(signer.error());
    }
    if (*signer) {
        env.signer = (*signer)->id;
        env.by_builder = (*signer)->builder;
    }
    auto bytes =
        store::decode_verified(static_cast<store::Codec>(codec), payload, raw_size, checksum);
    if (!bytes) {
        return refuse(EnvelopeErrc::bad_payload, "payload: " + bytes.error().message);
    }
    env.bytes = std::move(*bytes);
    return env;
}

}  // namespace kcache::remote
