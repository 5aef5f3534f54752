// The remote tier's object format (remote/src/envelope.cpp), read the
// way a download reads it. Fuzz input: one mode byte, then
//   bit 0 clear (download): the rest is an object served for the key of
//     kServedFields, decoded under the client's default size cap, so the key
//     recompute, the frame and the checksum checks all run (the seeds are
//     objects encode_envelope wrote for those fields, so mutations after the
//     fields reach the payload checks);
//   bit 0 set (round trip): the rest describes an entry (key fields,
//     provenance, one damage to apply, the raw bytes), which is encoded,
//     decoded, then damaged and decoded again.
//
// Invariants: decoding never crashes, throws or hangs, and every refusal has
// a message. An accepted object hashes to the requested key; re-encoding
// what was decoded gives an object that decodes to the same entry (fields
// normalized) and re-encodes to itself. An encoded entry decodes back to its
// normalized fields, its provenance and its bytes, and is refused as too large
// under a cap one byte below its size. A truncated or extended object is
// refused; a flipped byte is refused or yields the same bytes for the same key
// (the provenance and the descriptive kernel name are covered by neither the
// key nor the checksum).

#include <span>

#include "kcache/remote/envelope.hpp"
#include "kcache/remote/remote.hpp"
#include "key_fields.hpp"

namespace {

using namespace kcache::store;
using kcache::fuzz::check;
using kcache::remote::decode_envelope;
using kcache::remote::encode_envelope;
using kcache::remote::EnvelopeErrc;

// Signatures are not what this harness probes: objects are read as a node
// that takes unsigned ones does (a signature by an unknown key is ignored).
const kcache::remote::ObjectTrust kUnsigned{kcache::remote::ObjectSignatures::accept_unsigned,
                                            nullptr};

// The fields every download-mode seed was encoded for.
KeyFields served_fields() {
    KeyFields f;
    f.kernel_name = "gemm_f32";
    f.source_digest = "3f0a9c1e5b7d2468ace013579bdf2468ace013579bdf2468ace013579bdf2468";
    f.entry_points = {"gemm_f32"};
    f.build_options = "-cl-std=CL1.2 -DTILE=16";
    f.target_format = "native";
    f.vendor_id = 0x8086;
    f.device_name = "fuzz device";
    f.pci_device_id = 0x56a0;
    f.driver_version = "1.2.3";
    f.platform_name = "fuzz platform";
    f.platform_version = "OpenCL 3.0";
    f.opencl_c_version = "OpenCL C 1.2";
    f.address_bits = 64;
    f.compiler_id = "driver 1.2.3";
    return f;
}

bool same_provenance(const Provenance& a, const Provenance& b) {
    return a.producer_version == b.producer_version && a.origin == b.origin &&
           a.build_time_ms == b.build_time_ms && a.build_log == b.build_log;
}

void download(std::span<const std::uint8_t> object) {
    static const Key served = make_key(served_fields());
    const std::uint64_t cap = kcache::remote::Settings{}.max_object_bytes;
    auto env = decode_envelope(object, served, cap, kUnsigned);
    if (!env) {
        check(!env.error().message.empty(), "a refused object has no message");
        return;
    }
    check(make_key(env->fields) == served, "an object for another key was accepted");
    check(env->bytes.size() <= cap, "an object over the cap was accepted");
    const Bytes again = encode_envelope(env->fields, env->bytes, env->provenance);
    auto back = decode_envelope(again, served, env->bytes.size(), kUnsigned);
    check(back.ok(), "a decoded entry, encoded again, is refused");
    check(back->fields == normalized(env->fields) && back->bytes == env->bytes &&
              same_provenance(back->provenance, env->provenance),
          "a decoded entry, encoded again, decodes to another entry");
    check(encode_envelope(back->fields, back->bytes, back->provenance) == again,
          "encoding a decoded entry is not a fixed point");
}

Provenance read_provenance(kcache::fuzz::Bytes& in) {
    Provenance p;
    p.producer_version = in.str();
    p.origin = static_cast<Origin>(in.u8() % 3);
    p.build_time_ms = static_cast<TimeMs>(in.u32()) << (in.u8() % 32);
    p.build_log = in.str();
    return p;
}

// Damages `object` as `how` and `where` say; returns whether a strict reader must refuse it.
bool damage(Bytes& object, std::uint8_t how, std::uint32_t where) {
    const std::size_t at = where % object.size();
    switch (how % 3) {
        case 0:
            object[at] ^= static_cast<std::uint8_t>((how >> 2) | 1);
            return false;
        case 1:
            object.resize(at);
            return true;
        default:
            object.push_back(static_cast<std::uint8_t>(how));
            return true;
    }
}

void round_trip(kcache::fuzz::Bytes& in) {
    const KeyFields fields = kcache::fuzz::read_key_fields(in);
    const Provenance provenance = read_provenance(in);
    const std::uint8_t how = in.u8();
    const std::uint32_t where = in.u32();
    const std::string rest = in.rest();
    const Bytes raw(rest.begin(), rest.end());
    const Key key = make_key(fields);

    Bytes object = encode_envelope(fields, raw, provenance);
    auto env = decode_envelope(object, key, raw.size(), kUnsigned);
    check(env.ok(), "an encoded entry is refused");
    check(env->fields == normalized(fields), "an encoded entry decodes to other fields");
    check(env->bytes == raw, "an encoded entry decodes to other bytes");
    check(same_provenance(env->provenance, provenance),
          "an encoded entry decodes to another provenance");
    if (!raw.empty()) {
        auto small = decode_envelope(object, key, raw.size() - 1, kUnsigned);
        check(!small && small.error().code == EnvelopeErrc::too_large,
              "an entry over the cap is not refused as too large");
    }

    const bool must_refuse = damage(object, how, where);
    auto damaged = decode_envelope(object, key, raw.size(), kUnsigned);
    if (damaged) {
        check(!must_refuse, "a truncated or extended object is accepted");
        check(damaged->bytes == raw, "a damaged object yields other bytes");
        check(make_key(damaged->fields) == key, "a damaged object yields another key");
    } else {
        check(!damaged.error().message.empty(), "a refused object has no message");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    kcache::fuzz::Bytes in(data, size);
    const std::uint8_t mode = in.u8();
    if (mode & 1) {
        round_trip(in);
    } else {
        download(std::span(data, size).subspan(size == 0 ? 0 : 1));
    }
    return 0;
}
