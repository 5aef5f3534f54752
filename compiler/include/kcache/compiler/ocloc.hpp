#pragma once
// The ocloc AOT backend: compiles OpenCL C for Intel GPU targets with Intel's
// offline compiler, run through the watchdog runner (its own process group,
// a deadline, dying with its parent via `kcache-jit --exec-guard`).

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/compiler/subprocess.hpp"

namespace kcache::compiler {

enum class OclocErrc {
    bad_target,          // the target text is not a name, PCI id or list of them
    unsupported_target,  // this ocloc does not know the target ("Cannot get HW Info")
    build_error,         // the source did not compile; see `log`
    timeout,             // the deadline passed; ocloc was killed
    crash,               // ocloc died of a signal
    no_output,           // ocloc exited 0 but wrote no binary
    invalid_binary,      // the output failed the ELF / fat-binary sanity checks
    spawn_failed,        // ocloc (or the exec guard) could not be started
    io_error,            // the scratch directory could not be made or read
    tool_failed,         // ocloc failed in a way not classified above
};

// Returns a short name for `k` ("unsupported target", …).
const char* to_string(OclocErrc k);

struct OclocError {
    OclocErrc kind = OclocErrc::tool_failed;
    std::string message;  // one line for people
    std::string log;      // ocloc's output
    int exit_code = -1;
    int signal = 0;
};

struct AotRequest {
    std::string source;   // OpenCL C
    std::string options;  // OpenCL build options
    // ocloc's -device: a name ("tgllp"), a PCI id ("0x9a49"), or a list
    // ("tgllp,dg2-g10", also ranges "dg1:acm-g10") for a fat binary.
    std::string target;
};

enum class AotFormat {
    device_elf,  // one target: NEO's device ELF
    fat_binary,  // several targets: ar archive of device ELFs
};

struct AotBinary {
    AotFormat format = AotFormat::device_elf;
    std::string binary;  // passed check_device_elf / check_fat_binary
    std::string spirv;   // the portable form from the same source and options
    std::string log;     // ocloc's output
    std::chrono::nanoseconds elapsed{0};
};

// Who compiled: the ocloc driver version and digests of the compiler
// libraries it loads (IGC back end and its OpenCL front end).
struct CompilerIdentity {
    std::string ocloc_version;    // `ocloc query OCL_DRIVER_VERSION`, e.g. "22.43.24595"
    std::string igc_path;         // resolved libigc.so file
    std::string igc_sha256;       // lowercase hex
    std::string frontend_sha256;  // libigdfcl.so, lowercase hex; empty if not found
    // "ocloc <version> igc <sha256> fcl <sha256>": one string for keys.
    std::string to_string() const;
};

struct OclocConfig {
    std::string ocloc_path = "/usr/bin/ocloc";
    std::string guard_path;    // kcache-jit for --exec-guard; empty: default_helper_path()
    std::string library_dir;   // where to look for libigc first; empty: the standard dirs
    std::string scratch_root;  // parent of per-compile scratch dirs (Config::tmpdir); empty: /tmp
};

class OclocCompiler {
  public:
    explicit OclocCompiler(OclocConfig config = {});

    // Compiles `request` by `deadline` (plus kill and reap time); returns the
    // checked binary and its SPIR-V, or a classified error.
    Result<AotBinary, OclocError> compile(const AotRequest& request,
                                          Clock::time_point deadline) const;

    // Queries ocloc's version and digests its compiler libraries (reads
    // ~40 MiB; callers cache the answer). Error: ocloc or libigc not found.
    Result<CompilerIdentity, OclocError> identity(Clock::time_point deadline) const;

  private:
    // Runs ocloc with `args` in `cwd` through the exec guard.
    RunResult run_ocloc(const std::vector<std::string>& args, const std::string& cwd,
                        Clock::time_point deadline) const;

    // SPIR-V of `request` via `-spv_only` in `dir` (for fat builds).
    Result<std::string, OclocError> portable_spirv(const AotRequest& request,
                                                   const std::filesystem::path& dir,
                                                   Clock::time_point deadline) const;

    OclocConfig config_;
};

}  // namespace kcache::compiler
