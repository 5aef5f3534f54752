#pragma once
// The pipe protocol between the parent (JitCompiler) and kcache-jit: request
// frames on the helper's stdin, one reply frame on its stdout for each (one
// pair for a one-shot helper, any number for a pooled one), or two for a
// request that asks for its warm-up after the reply. The grammar is
// written down in src/jit_protocol.cpp next to the code that reads it; every
// field is checked on read.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/compiler/error.hpp"

namespace kcache::compiler {

// Which OpenCL device to build for, as plain data. Empty strings and a zero
// vendor id match anything; every non-empty field must match exactly.
struct DeviceSelector {
    std::string platform_name;
    std::string device_name;
    std::string driver_version;
    std::uint32_t vendor_id = 0;
    std::string uuid_hex;  // 32 lowercase hex digits (cl_khr_device_uuid); empty: any
};

// Launch each kernel once before the binary is taken, so that drivers which
// finish code generation at first launch (PoCL: the work-group function for
// this local size) store a binary that loads ready to run. Global/constant
// pointer arguments get zeroed buffers of `buffer_bytes`, local pointers a
// local allocation, scalars zeros. Asking for a warm-up adds
// -cl-kernel-arg-info to the build options (the argument types are needed).
struct WarmupLaunch {
    std::uint32_t work_dim = 1;
    std::array<std::uint64_t, 3> global{1, 1, 1};
    std::array<std::uint64_t, 3> local{1, 1, 1};
    std::uint64_t buffer_bytes = 1u << 16;
};

inline constexpr std::uint64_t kDefaultBuildStack = 64ull << 20;

// One program of a link (JitRequest::units): compiled from `source` with
// `options` and its input headers (clCompileProgram's: name, source).
struct CompileUnit {
    std::string source;
    std::string options;
    std::vector<std::pair<std::string, std::string>> headers = {};
    bool operator==(const CompileUnit&) const = default;
};

struct JitRequest {
    DeviceSelector device;
    std::string source;
    std::string options;
    // An intermediate language module (SPIR-V) to build instead of `source`:
    // when non-empty the helper makes the program with clCreateProgramWithIL
    // and builds it with `options`; `source` is then only descriptive.
    std::string il;
    std::vector<std::string> entry_points;  // must exist in the program; empty: all
    std::optional<WarmupLaunch> warmup;
    // With a warm-up, a pooled helper replies as soon as the binary is built
    // and validated (warmed false, warm_pending true), then warms up and
    // sends a second reply with the warmed binary. One-shot helpers ignore it.
    bool warm_after_reply = false;
    std::uint64_t address_space_cap = 0;  // RLIMIT_AS for the helper in bytes; 0: none
    std::uint64_t build_stack_bytes = kDefaultBuildStack;
    // Not empty: a link instead of a build. The helper compiles each unit
    // (clCompileProgram) and links them all (clLinkProgram) with `options`;
    // `source` and `il` are then unused.
    std::vector<CompileUnit> units = {};
    // With one unit and no entry points or warm-up: that unit's compile
    // alone (clCompileProgram, no link), and the reply's binary is the
    // compiled object's. A program that calls a function another program
    // defines compiles so, though it does not build alone.
    bool compile_only = false;
};

// What the helper reports; ok carries a validated binary.
enum class ReplyStatus : std::uint32_t {
    ok = 0,
    build_error = 1,       // clBuildProgram failed; build_log says why
    device_not_found = 2,  // no enumerated device matches the selector
    bad_request = 3,       // the request frame failed a check
    driver_error = 4,      // an OpenCL call outside the build failed
    invalid_binary = 5,    // the binary did not load back (validation)
};

// Phase times measured inside the helper, in microseconds. A pooled helper
// pays select (platform start + device match) and context once: later
// compiles report them near zero.
struct HelperTimings {
    std::uint64_t select_us = 0;   // platform start-up and device match
    std::uint64_t context_us = 0;  // clCreateContext
    std::uint64_t build_us = 0;    // clCreateProgramWith{Source,IL} + clBuildProgram + entry points
    std::uint64_t warmup_us = 0;   // the warm-up launch
    std::uint64_t fetch_us = 0;    // CL_PROGRAM_BINARY_SIZES + CL_PROGRAM_BINARIES
    std::uint64_t validate_us = 0;  // loading the binary back
    std::uint64_t total_us = 0;     // select to validate
};

// Where the helper process was, on the system-wide monotonic clock
// (CLOCK_MONOTONIC, which std::chrono::steady_clock reads on Linux), so that
// the parent can split its wall time into spawn, transfer and work.
struct HelperStamps {
    std::uint64_t started_ns = 0;  // entering main()
    std::uint64_t request_ns = 0;  // the request frame fully read
    std::uint64_t reply_ns = 0;    // the reply frame about to be written
};

struct JitReply {
    ReplyStatus status = ReplyStatus::ok;
    std::string message;  // empty on success; else what failed
    std::string binary;
    std::string build_log;
    HelperTimings timings;
    bool warmed = false;           // the warm-up launch ran before the binary was taken
    std::string warmup_note;       // why not, when a warm-up was asked for and skipped
    bool warm_pending = false;     // a second reply, with the warmed binary, follows this one
    std::uint32_t helper_pid = 0;  // the process that served the request
    std::uint64_t served = 1;      // requests this helper process has served, this one included
    HelperStamps stamps;
};

// The frame version this build writes and accepts.
inline constexpr std::uint32_t kProtocolVersion = 6;
// Size of the fixed frame header (magic, version, kind, payload length).
inline constexpr std::size_t kFrameHeaderSize = 20;
// Upper bounds checked on read.
inline constexpr std::uint64_t kMaxRequestPayload = 256ull << 20;
inline constexpr std::uint64_t kMaxReplyPayload = 2ull << 30;

// Returns the complete request frame for `r`.
std::string encode_request(const JitRequest& r);
// Returns the complete reply frame for `r`.
std::string encode_reply(const JitReply& r);

// Parses a complete request frame; error: a message naming the bad field.
Result<JitRequest, CompilerError> decode_request(const std::string& frame);
// Parses a complete reply frame; error: a message naming the bad field.
Result<JitReply, CompilerError> decode_reply(const std::string& frame);

// Checks a frame header (first kFrameHeaderSize bytes of `header`) for a
// request and returns its payload length; error: what is wrong.
Result<std::uint64_t, CompilerError> check_request_header(const std::string& header);
// The same for a reply frame.
Result<std::uint64_t, CompilerError> check_reply_header(const std::string& header);

}  // namespace kcache::compiler
