#pragma once
// Known-answer tests of cached binaries on their device (`kcache verify
// --run`): the stored binary is loaded as it would be at run time, launched
// on deterministic inputs and compared with the kernels' CPU reference
// within the variant's documented tolerance.

#include <string>
#include <vector>

#include "kcache/store/types.hpp"
#include "opencl_devices.hpp"

namespace kcache::cli {

enum class KatState {
    passed,         // the device result matched the reference
    failed,         // it did not (or the binary did not load or launch)
    no_kat,         // not a registry kernel, or not built from the registry's source for it
    device_absent,  // the device the binary was built for is not present
};

const char* to_string(KatState s);

struct KatOutcome {
    KatState state = KatState::no_kat;
    std::string detail;
};

// Runs the known-answer test of `entry` on the device of `devices` it was
// built for (same name, platform and driver).
KatOutcome run_kat(const std::vector<OpenedDevice>& devices, const store::Entry& entry);

}  // namespace kcache::cli
