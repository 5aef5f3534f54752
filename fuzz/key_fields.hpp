#pragma once
// A KeyFields read off fuzz bytes, shared by the harnesses that need whole
// keys (key, remote_envelope): every string field, every number field, then
// up to seven entry points; and the fixed key of the store harnesses.

#include "fuzz_support.hpp"
#include "kcache/common/sha256.hpp"
#include "kcache/store/key.hpp"

namespace kcache::fuzz {

inline constexpr int kStringFields = 12;
inline constexpr int kNumberFields = 5;

// Returns string field `i` (modulo their count) of `k`.
inline std::string* string_field(store::KeyFields& k, int i) {
    std::string* fields[kStringFields] = {
        &k.kernel_name,      &k.source_digest,  &k.build_options, &k.target_format,
        &k.device_name,      &k.driver_version, &k.platform_name, &k.platform_version,
        &k.opencl_c_version, &k.device_uuid,    &k.driver_uuid,   &k.compiler_id};
    return fields[i % kStringFields];
}

// Returns number field `i` (modulo their count) of `k`.
inline std::uint32_t* number_field(store::KeyFields& k, int i) {
    std::uint32_t* fields[kNumberFields] = {&k.key_version, &k.vendor_id, &k.pci_device_id,
                                            &k.ip_version, &k.address_bits};
    return fields[i % kNumberFields];
}

// Returns the fields that the next bytes of `in` describe.
inline store::KeyFields read_key_fields(Bytes& in) {
    store::KeyFields k;
    for (int i = 0; i < kStringFields; ++i) {
        *string_field(k, i) = in.str();
    }
    for (int i = 0; i < kNumberFields; ++i) {
        *number_field(k, i) = in.u32();
    }
    for (int n = in.u8() % 8; n > 0; --n) {
        k.entry_points.push_back(in.str());
    }
    return k;
}

// The fixed fields of the one key the store harnesses (store, hot) put and
// look up.
inline store::KeyFields probe_fields() {
    store::KeyFields k;
    k.kernel_name = "fuzz";
    k.source_digest = sha256_hex("__kernel void fuzz() {}");
    k.entry_points = {"fuzz"};
    k.target_format = "native";
    k.device_name = "cpu";
    k.driver_version = "1";
    return k;
}

}  // namespace kcache::fuzz
