#pragma once
// kcache-verify's caller mode: the known-answer test an operator library
// gives its own kernel, described in data (a KAT file) because kcache knows
// nothing of that kernel's arguments:
//
//   kcache-verify --kat FILE --options OPTS --device NAME --platform NAME --driver VERSION < BINARY
//
// The binary (what kcache serves for the kernel on that driver) comes on
// stdin; the reply is the verdict's two lines, as for --variant.
//
// KAT file (JSON; every key checked, unknown keys are errors):
//
//   kat       = { "format": 1,
//                 "kernel": string,             -- the entry point launched
//                 "global": [ uint, … ],        -- 1 to 3 dimensions, each > 0
//                 "local": [ uint, … ]?,        -- as many; default: the driver's choice
//                 "args": [ arg, … ],           -- in the kernel's parameter order
//                 "tolerance": { "abs": number?, "rel": number? }? }  -- default 0, 0
//   arg       = { "scalar": type, "value": number }
//             | { "buffer": type, "in": [ number, … ] }          -- read by the kernel
//             | { "buffer": type, "count": uint,                 -- written by it, then
//                 "expected": [ number, … ], "in": [ … ]? }      --   compared ("in": its
//                                                                --   initial contents)
//             | { "local": uint }                                -- __local bytes
//   type      = "f32" | "i32" | "u32"
//
// An output passes when every value is within abs + rel × |expected| of its
// expected value (a NaN never is); the verdict's detail names the first one
// that is not, or the largest error of each output.

#include <cstdint>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/opencl.h"

namespace kcache::cl {

// A caller's KAT's verdict.
struct CallerKatVerdict {
    bool passed = false;
    std::string detail;
};

// Runs the KAT in `kat_text` on `binary` built with `options` for `device` of
// `platform`. Error: what is wrong with the KAT file (the field, by path).
Result<CallerKatVerdict, std::string> run_caller_kat(cl_platform_id platform, cl_device_id device,
                                                     const std::string& kat_text,
                                                     const std::vector<std::uint8_t>& binary,
                                                     const std::string& options);

}  // namespace kcache::cl
