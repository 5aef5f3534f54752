#pragma once
// kcache-verify's canary mode: builds registry variants from source on one
// device, loads each back from the binary the driver produced (what kcache
// serves), and runs its known-answer test on inputs drawn from a seed.
//
//   kcache-verify --canary "ID;ID;…" --seed N --device NAME --platform NAME --driver VERSION
//
// One line per variant on stdout, written as soon as it is known (so that a
// watchdog that kills this process mid-way knows which variant was running:
// the first one without a line):
//
//   line    = variant-id TAB state TAB detail LF
//   state   = "passed" | "failed" | "unsupported"
//   detail  = text without TAB or LF (the KAT's summary, its first failing
//             check, or the OpenCL step that failed with its build log)

#include <cstdint>
#include <string>
#include <vector>

#include "kcache/opencl.h"

namespace kcache::cl {

// Runs the canary of `variant_ids` on `device` (of `platform`); returns 0.
int run_canary_variants(cl_platform_id platform, cl_device_id device,
                        const std::vector<std::string>& variant_ids,
                        const std::vector<std::string>& device_extensions, std::uint32_t seed);

}  // namespace kcache::cl
