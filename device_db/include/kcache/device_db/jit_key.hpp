#pragma once
// How a device and a compile input become the store key of a native binary
// built by the device's own driver (JIT). Shared by the service's ladder (its
// AOT and SPIR-V keys build on it), the CLI and the driver canary, so that a
// binary stored by one is found by the others.

#include <string>
#include <vector>

#include "kcache/device_db/identity.hpp"
#include "kcache/kcache_types.hpp"
#include "kcache/store/key.hpp"

namespace kcache::device_db {

// What reaches a compiler: the exact text, options and entry points.
struct CompileInput {
    std::string name;  // descriptive only
    std::string source;
    std::string options;
    std::vector<std::string> entry_points;
    // Not empty: a link of these compiled units, `options` the link's
    // (SourceRequest::link); the source digest then holds every unit.
    std::vector<LinkUnit> link = {};
};

// Key fields of a native binary built by `device`'s own driver (JIT) from
// `input`: every identity field that affects code generation, and the driver
// (version, UUID and the files of its compiler: jit_compiler_id) as the
// compiler identity.
store::KeyFields jit_key_fields(const DeviceIdentity& device, const CompileInput& input);
// The same in two halves: the device's (every field but the input's, made
// once per device) and then `input`'s, set into `f`.
store::KeyFields jit_device_fields(const DeviceIdentity& device);
void set_input_fields(store::KeyFields& f, const CompileInput& input);

}  // namespace kcache::device_db
