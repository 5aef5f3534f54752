#include "kcache/compiler/spirv.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>

#include "kcache/compiler/binary_check.hpp"
#include "kcache/compiler/jit.hpp"
#include "scratch_dir.hpp"

namespace kcache::compiler {
namespace {

SpirvError spirv_error(SpirvErrc kind, std::string message, std::string log = {}) {
    return SpirvError{kind, std::move(message), std::move(log)};
}

bool is_extension_name(const std::string& s) {
    return s.size() > 3 && s.compare(0, 3, "cl_") == 0 &&
           s.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") == std::string::npos;
}

bool starts_with(const std::string& s, const char* prefix) {
    return s.compare(0, std::strlen(prefix), prefix) == 0;
}

// The build options as clang arguments: only defines, undefines, include
// directories, warnings and -cl-* options, so nothing can name an output.
Result<std::vector<std::string>, SpirvError> option_args(const std::string& options,
                                                         std::string& cl_std) {
    std::vector<std::string> out;
    std::istringstream in(options);
    for (std::string tok; in >> tok;) {
        if (tok.find_first_of("\"'\\") != std::string::npos ||
            !(starts_with(tok, "-D") || starts_with(tok, "-U") || starts_with(tok, "-I") ||
              starts_with(tok, "-cl-") || tok == "-w" || tok == "-Werror")) {
            return fail(
                spirv_error(SpirvErrc::bad_request,
                            "build option '" + tok +
                                "' cannot be given to the SPIR-V "
                                "front end (only -D, -U, -I, -w, -Werror and -cl-* options)"));
        }
        if (starts_with(tok, "-cl-std=")) {
            cl_std = tok.substr(8);
            continue;
        }
        out.push_back(tok);
    }
    return out;
}

// True when a conditional of `source` (#if, #ifdef, #ifndef, #elif) names `word`.
bool tested_by_source(const std::string& source, const char* word) {
    std::istringstream in(source);
    for (std::string line; std::getline(in, line);) {
        const std::size_t hash = line.find_first_not_of(" \t");
        if (hash == std::string::npos || line[hash] != '#') {
            continue;
        }
        const std::size_t name = line.find_first_not_of(" \t", hash + 1);
        const bool conditional = name != std::string::npos && (line.compare(name, 2, "if") == 0 ||
                                                               line.compare(name, 4, "elif") == 0);
        if (conditional && line.find(word) != std::string::npos) {
            return true;
        }
    }
    return false;
}

// clang's -cl-ext: every extension off but the request's, so the module
// uses no other; the OpenCL C features every version 1.2 device has stay on
// ("-all" drops them too). clang 14's header declares vload_half and
// vstore_half only with cl_khr_fp16 on, so it stays on in the front end
// for a source whose conditionals never test it (half arithmetic also
// needs its pragma, which a variant that requires it enables); a source
// that tests it gets it only when the request does.
std::string front_end_extensions(const SpirvRequest& request) {
    std::string arg =
        "-cl-ext=-all,+__opencl_c_named_address_space_builtins,+__opencl_c_images,"
        "+__opencl_c_int64";
    std::vector<std::string> on = request.extensions;
    if (!tested_by_source(request.source, "cl_khr_fp16")) {
        on.push_back("cl_khr_fp16");
    }
    for (const auto& e : on) {
        arg += ",+" + e;
    }
    return arg;
}

// clang's arguments for `request` (kernel.cl to kernel.bc in the working
// directory); error: a request the backend refuses.
Result<std::vector<std::string>, SpirvError> clang_args(const SpirvRequest& request) {
    std::string cl_std = request.cl_std;
    auto options = option_args(request.options, cl_std);
    if (!options) {
        return fail(options.error());
    }
    auto exts = canonical_extensions(request.extensions);
    if (!exts || *exts != request.extensions) {
        return fail(
            spirv_error(SpirvErrc::bad_request, exts ? "the extension list is not sorted and unique"
                                                     : exts.error().message));
    }
    if (cl_std.empty() || cl_std.find_first_not_of("CL0123456789.") != std::string::npos ||
        request.spirv_version.empty() ||
        request.spirv_version.find_first_not_of("0123456789.") != std::string::npos) {
        return fail(spirv_error(SpirvErrc::bad_request, "bad OpenCL C version '" + cl_std +
                                                            "' or SPIR-V version '" +
                                                            request.spirv_version + "'"));
    }
    std::vector<std::string> args = {"-c",      "-target",
                                     "spir64",  "-cl-std=" + cl_std,
                                     "-Xclang", "-finclude-default-header",
                                     "-Xclang", front_end_extensions(request)};
    // Unoptimised IR without optnone (the driver optimises; the translator
    // refuses some instructions LLVM's passes make, such as freeze). An
    // `inline` function without `static` keeps its definition (GNU inline
    // rules; under C99's a call left out of line would not link).
    args.insert(args.end(),
                {"-O2", "-Xclang", "-disable-llvm-passes", "-fgnu89-inline", "-emit-llvm"});
    args.insert(args.end(), options->begin(), options->end());
    args.insert(args.end(), {"-o", "kernel.bc", "kernel.cl"});
    return args;
}

// Classifies a finished tool run; nullopt when it exited 0.
std::optional<SpirvError> classify(const RunResult& r, const char* tool) {
    const std::string log = r.out + r.err;
    const std::string name(tool);
    switch (r.outcome) {
        case ChildExit::spawn_failed:
            return spirv_error(SpirvErrc::spawn_failed, "cannot start the exec guard for " + name +
                                                            ": " + std::strerror(r.spawn_errno));
        case ChildExit::timed_out:
            return spirv_error(SpirvErrc::timeout, name + " passed its deadline and was killed",
                               log);
        case ChildExit::signaled:
            return spirv_error(SpirvErrc::crash,
                               name + " died of signal " + std::to_string(r.signal), log);
        case ChildExit::exited:
            if (r.exit_code == 0) {
                return std::nullopt;
            }
            if (r.exit_code == 127 && log.find("kcache-jit: cannot exec") != std::string::npos) {
                return spirv_error(SpirvErrc::spawn_failed, name + " cannot be run", log);
            }
            return spirv_error(SpirvErrc::build_error,
                               name + " failed (exit code " + std::to_string(r.exit_code) + ")",
                               log);
    }
    return std::nullopt;
}

// The first line of `text`.
std::string first_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

}  // namespace

const char* to_string(SpirvErrc k) {
    switch (k) {
        case SpirvErrc::bad_request:
            return "bad request";
        case SpirvErrc::build_error:
            return "build error";
        case SpirvErrc::timeout:
            return "timeout";
        case SpirvErrc::crash:
            return "crash";
        case SpirvErrc::spawn_failed:
            return "spawn failed";
        case SpirvErrc::io_error:
            return "I/O error";
        case SpirvErrc::invalid_output:
            return "invalid output";
    }
    return "?";
}

Result<std::vector<std::string>, CompilerError> canonical_extensions(
    std::vector<std::string> names) {
    names.erase(std::remove(names.begin(), names.end(), std::string()), names.end());
    for (const auto& n : names) {
        if (!is_extension_name(n)) {
            return fail(
                CompilerError{CompilerErrc::bad_name,
                              "'" + n + "' is not an OpenCL C extension name (cl_ and [a-z0-9_])"});
        }
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    return names;
}

std::vector<std::string> extensions_of_device(const std::string& device_extensions) {
    static const char* const kFamilies[] = {"cl_khr_", "cl_ext_", "cl_intel_", "cl_amd_", "cl_nv_"};
    std::vector<std::string> out;
    std::istringstream in(device_extensions);
    for (std::string name; in >> name;) {
        const bool known = std::any_of(std::begin(kFamilies), std::end(kFamilies),
                                       [&](const char* f) { return starts_with(name, f); });
        if (known && is_extension_name(name)) {
            out.push_back(name);
        }
    }
    return canonical_extensions(std::move(out)).value();
}

SpirvCompiler::SpirvCompiler(SpirvConfig config) : config_(std::move(config)) {
    if (config_.guard_path.empty()) {
        config_.guard_path = default_helper_path();
    }
}

RunResult SpirvCompiler::run_tool(const std::string& tool, const std::vector<std::string>& args,
                                  const std::string& cwd, Clock::time_point deadline) const {
    return run_guarded(config_.guard_path, tool, args, cwd, deadline);
}

Result<SpirvModule, SpirvError> SpirvCompiler::compile(const SpirvRequest& request,
                                                       Clock::time_point deadline) const {
    auto args = clang_args(request);
    if (!args) {
        return fail(args.error());
    }
    auto dir = ScratchDir::create(config_.scratch_root);
    if (!dir || !write_file(dir->path() / "kernel.cl", request.source)) {
        return fail(spirv_error(SpirvErrc::io_error, "cannot prepare a scratch directory"));
    }
    const std::string cwd = dir->path().string();
    const RunResult front = run_tool(config_.clang_path, *args, cwd, deadline);
    if (auto e = classify(front, "clang")) {
        return fail(std::move(*e));
    }
    const RunResult back =
        run_tool(config_.translator_path,
                 {"--spirv-max-version=" + request.spirv_version, "kernel.bc", "-o", "kernel.spv"},
                 cwd, deadline);
    SpirvModule out;
    out.log = front.out + front.err + back.out + back.err;
    if (auto e = classify(back, "llvm-spirv")) {
        e->log = out.log;
        return fail(std::move(*e));
    }
    out.spirv = read_file(dir->path() / "kernel.spv").value_or(std::string());
    if (!looks_like_spirv(out.spirv) || out.spirv.size() % 4 != 0) {
        return fail(
            spirv_error(SpirvErrc::invalid_output, "llvm-spirv wrote no SPIR-V module", out.log));
    }
    out.elapsed = front.elapsed + back.elapsed;
    return out;
}

Result<std::string, SpirvError> SpirvCompiler::identity(Clock::time_point deadline) const {
    std::string text;
    for (const auto* tool : {&config_.clang_path, &config_.translator_path}) {
        const RunResult r = run_tool(*tool, {"--version"}, "", deadline);
        if (auto e = classify(r, tool->c_str())) {
            return fail(std::move(*e));
        }
        const std::string line = first_line(r.out.empty() ? r.err : r.out);
        text += (text.empty() ? "clang " : " llvm-spirv ") + line;
    }
    return text;
}

}  // namespace kcache::compiler
