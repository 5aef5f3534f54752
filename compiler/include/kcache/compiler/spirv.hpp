#pragma once
// The SPIR-V backend: compiles OpenCL C to a portable SPIR-V module with
// clang (OpenCL C to LLVM IR for spir64) and the SPIR-V translator, both run
// through the watchdog runner like ocloc (their own process group, a
// deadline, dying with the parent via `kcache-jit --exec-guard`). The module
// is compiled for a stated set of OpenCL C extensions: code that uses one a
// device lacks does not link there (docs/design.md, "The SPIR-V tier").

#include <chrono>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/compiler/error.hpp"
#include "kcache/compiler/subprocess.hpp"

namespace kcache::compiler {

enum class SpirvErrc {
    bad_request,     // an extension name, version or option the backend refuses
    build_error,     // the source did not compile; see `log`
    timeout,         // the deadline passed; the tool was killed
    crash,           // a tool died of a signal
    spawn_failed,    // a tool (or the exec guard) could not be started
    io_error,        // the scratch directory could not be made or read
    invalid_output,  // the translator wrote no SPIR-V module
};

// Returns a short name for `k` ("build error", …).
const char* to_string(SpirvErrc k);

struct SpirvError {
    SpirvErrc kind = SpirvErrc::build_error;
    std::string message;  // one line for people
    std::string log;      // the tools' output
};

struct SpirvRequest {
    std::string source;   // OpenCL C
    std::string options;  // OpenCL build options, given to clang as they are
    // The OpenCL C version ("CL1.2", "CL2.0", "CL3.0"); from -cl-std= in
    // `options` when that names one.
    std::string cl_std = "CL1.2";
    // The OpenCL C extensions the module may use ("cl_khr_fp16", …); every
    // other one is off. Sorted, no duplicates (canonical_extensions).
    std::vector<std::string> extensions;
    std::string spirv_version = "1.2";  // the highest SPIR-V version to emit
};

struct SpirvModule {
    std::string spirv;  // starts with the SPIR-V magic number
    std::string log;    // the tools' output
    std::chrono::nanoseconds elapsed{0};
};

struct SpirvConfig {
    std::string clang_path = "/usr/bin/clang-14";
    std::string translator_path = "/usr/bin/llvm-spirv-14";
    std::string guard_path;    // kcache-jit for --exec-guard; empty: default_helper_path()
    std::string scratch_root;  // parent of per-compile scratch dirs; empty: /tmp
};

// `names` sorted, without duplicates and empty names: the form a key and a
// request carry. Error: a name that is not an OpenCL C extension name.
Result<std::vector<std::string>, CompilerError> canonical_extensions(
    std::vector<std::string> names);

// The OpenCL C extensions a device reports (CL_DEVICE_EXTENSIONS, split at
// spaces) that are OpenCL C extensions the front end can enable: those
// named cl_khr_* / cl_ext_* / cl_intel_* / cl_amd_* / cl_nv_*, canonical.
std::vector<std::string> extensions_of_device(const std::string& device_extensions);

class SpirvCompiler {
  public:
    explicit SpirvCompiler(SpirvConfig config = {});

    // Compiles `request` by `deadline` (plus kill and reap time); returns the
    // module or a classified error.
    Result<SpirvModule, SpirvError> compile(const SpirvRequest& request,
                                            Clock::time_point deadline) const;

    // "clang <version line> llvm-spirv <version line>": who compiles, for
    // keys and provenance. Error: a tool is missing or did not answer.
    Result<std::string, SpirvError> identity(Clock::time_point deadline) const;

  private:
    RunResult run_tool(const std::string& tool, const std::vector<std::string>& args,
                       const std::string& cwd, Clock::time_point deadline) const;

    SpirvConfig config_;
};

}  // namespace kcache::compiler
