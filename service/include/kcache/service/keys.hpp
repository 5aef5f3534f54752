#pragma once
// How the service turns (device, kernel variant) into store keys. Shared by
// the runtime ladder and the CLI (warm, prebuild, explain), so that a binary
// stored by one is found by the other.

#include <optional>
#include <string>
#include <vector>

#include "kcache/device_db/database.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/store/key.hpp"

namespace kcache::service {

// What reaches a compiler: the exact text, options and entry points.
struct CompileInput {
    std::string name;  // descriptive only
    std::string source;
    std::string options;
    std::vector<std::string> entry_points;
};

// Key fields of a native binary built by `device`'s own driver (JIT) from
// `input`: every identity field that affects code generation, and the driver
// (version, UUID and the files of its compiler: device_db::jit_compiler_id)
// as the compiler identity.
store::KeyFields jit_key_fields(const device_db::DeviceIdentity& device, const CompileInput& input);
// The same in two halves: the device's (every field but the input's, made
// once per device) and then `input`'s, set into `f`.
store::KeyFields jit_device_fields(const device_db::DeviceIdentity& device);
void set_input_fields(store::KeyFields& f, const CompileInput& input);

// Key fields of an ahead-of-time binary for ocloc target `target`: no
// driver fields, so any compatible driver of that target finds it.
store::KeyFields aot_key_fields(const std::string& target, const CompileInput& input);

// The ocloc target of `device` per `db` (Intel GPUs the database knows);
// nullopt for every other device.
std::optional<std::string> aot_target(const device_db::DeviceDb& db,
                                      const device_db::DeviceIdentity& device);

}  // namespace kcache::service
