#pragma once
// How the service turns (device, kernel variant) into store keys. Shared by
// the runtime ladder and the CLI (warm, prebuild, explain), so that a binary
// stored by one is found by the other. The JIT key is device_db's.

#include <optional>
#include <string>
#include <vector>

#include "kcache/device_db/database.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/device_db/jit_key.hpp"
#include "kcache/kcache_types.hpp"
#include "kcache/store/key.hpp"

namespace kcache::service {

// Key fields of an ahead-of-time binary for ocloc target `target`: no
// driver fields, so any compatible driver of that target finds it.
store::KeyFields aot_key_fields(const std::string& target, const device_db::CompileInput& input);

// What a SPIR-V entry was compiled for (docs/design.md, "The SPIR-V tier"):
// the SPIR-V version and the OpenCL C extensions the module may use, sorted
// and unique. A module that uses an extension links only where the device
// has it, so the set is part of the key.
struct IlTarget {
    std::string spirv_version = "1.2";
    std::vector<std::string> extensions;
};

// The IL target of `input`: the extensions its registry variant requires
// when `input` is one rendered as the registry renders it (its name the
// variant's id), else none.
IlTarget il_target(const device_db::CompileInput& input);

// Key fields of a SPIR-V module of `input` for `target`: no device or driver
// fields (any driver that loads IL may build it); target format
// "spirv:<version>:<extension>+<extension>…".
store::KeyFields il_key_fields(const IlTarget& target, const device_db::CompileInput& input);

// The OpenCL C extensions of `target` that `device` lacks (empty: it can
// build the module), and whether the device loads IL at all (it reports
// cl_khr_il_program).
std::vector<std::string> missing_extensions(const IlTarget& target,
                                            const device_db::DeviceIdentity& device);
bool accepts_il(const device_db::DeviceIdentity& device);

// The ocloc target of `device` per `db` (Intel GPUs the database knows);
// nullopt for every other device.
std::optional<std::string> aot_target(const device_db::DeviceDb& db,
                                      const device_db::DeviceIdentity& device);

}  // namespace kcache::service
