#pragma once
// kcache-verify's canary mode: builds registry variants from source on one
// device, loads each back from the binary the driver produced (what kcache
// serves), and runs its known-answer test on inputs drawn from a seed.
//
//   kcache-verify --canary "ID;ID;…" --seed N --device NAME --platform NAME --driver VERSION
//                 [--previous stdin]
//
// With --previous stdin, stdin holds one frame per listed ID, in the list's
// order: the binary an earlier driver built for that variant on this device,
// or nothing (an empty driver and a size of 0):
//
//   frame   = driver LF size LF bytes     (driver: text without LF; size:
//                                          decimal count of the bytes)
//
// The differential check loads such a binary on this driver, runs its
// known-answer test on the same inputs, and compares the two programs'
// outputs with each other within the kernel's tolerance; the CPU reference
// decides which one is wrong.
//
// One line per variant on stdout, written as soon as it is known (so that a
// watchdog that kills this process mid-way knows which variant was running:
// the first one without a line):
//
//   line    = variant-id TAB state TAB detail LF
//   state   = "passed" | "failed" | "unsupported"
//   detail  = text without TAB or LF (the KAT's summary, its first failing
//             check, or the OpenCL step that failed with its build log)
//
// then, for a variant with an earlier driver's binary, one more line:
//
//   diff    = variant-id TAB "differential" TAB result TAB max-difference TAB detail LF
//   result  = "agree"          both right, outputs within tolerance of each other
//           | "both_right"     both right by the reference, but apart by more
//           | "new_wrong"      this driver's program is wrong, the earlier binary right
//           | "previous_wrong" the earlier binary is wrong on this driver
//           | "both_wrong"     both wrong: the fault is in running, not compiling
//           | "not_loaded"     this driver refuses the earlier binary
//   max-difference = the largest |new - previous| over the outputs both
//             produced, or "-" when there were none

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/opencl.h"

namespace kcache::cl {

// The binary an earlier driver built for a variant under test.
struct PreviousBinary {
    std::string driver;
    std::vector<std::uint8_t> bytes;
};

// The frames of `--previous stdin` (above) read from `in`, one per variant
// of `count`; error: why `in` is not that.
Result<std::vector<std::optional<PreviousBinary>>, std::string> parse_previous_frames(
    const std::string& in, std::size_t count);

// Runs the canary of `variant_ids` on `device` (of `platform`), with the
// differential check of the i-th variant against `previous[i]` where
// `previous` has one; returns 0.
int run_canary_variants(cl_platform_id platform, cl_device_id device,
                        const std::vector<std::string>& variant_ids,
                        const std::vector<std::string>& device_extensions, std::uint32_t seed,
                        const std::vector<std::optional<PreviousBinary>>& previous);

}  // namespace kcache::cl
