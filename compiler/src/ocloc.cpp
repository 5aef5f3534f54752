#include "kcache/compiler/ocloc.hpp"

#include <cstring>
#include <optional>

#include "kcache/compiler/binary_check.hpp"
#include "kcache/compiler/jit.hpp"
#include "scratch_dir.hpp"

namespace kcache::compiler {
namespace {

namespace fs = std::filesystem;

OclocError aot_error(OclocErrc kind, std::string message, std::string log = {}) {
    OclocError e;
    e.kind = kind;
    e.message = std::move(message);
    e.log = std::move(log);
    return e;
}

// Names, PCI ids, versions, lists (',') and ranges (':'); nothing that ocloc
// could read as an option.
bool valid_target(const std::string& t) {
    return !t.empty() && t.front() != '-' &&
           t.find_first_not_of(
               "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:,-") ==
               std::string::npos;
}

bool is_fat_target(const std::string& t) {
    return t.find_first_of(",:") != std::string::npos;
}

// The first single target named in a list or range ("tgllp,dg1" → "tgllp").
std::string first_target(const std::string& t) {
    const std::size_t begin = t.find_first_not_of(",:");
    const std::size_t end = t.find_first_of(",:", begin);
    return t.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

bool mentions(const std::string& log, const char* what) {
    return log.find(what) != std::string::npos;
}

// The one line of `log` that contains `what` (trimmed), or `what` itself.
std::string line_with(const std::string& log, const char* what) {
    const std::size_t at = log.find(what);
    if (at == std::string::npos) {
        return what;
    }
    const std::size_t begin =
        log.rfind('\n', at) == std::string::npos ? 0 : log.rfind('\n', at) + 1;
    return log.substr(begin, log.find('\n', at) - begin);
}

// Classifies a finished ocloc run; nullopt when it exited 0.
std::optional<OclocError> classify(const RunResult& r, const std::string& target) {
    const std::string log = r.out + r.err;
    std::optional<OclocError> e;
    switch (r.outcome) {
        case ChildExit::spawn_failed:
            e = aot_error(
                OclocErrc::spawn_failed,
                std::string("cannot start the ocloc exec guard: ") + std::strerror(r.spawn_errno));
            break;
        case ChildExit::timed_out:
            e = aot_error(OclocErrc::timeout, "ocloc passed its deadline and was killed", log);
            break;
        case ChildExit::signaled:
            e = aot_error(OclocErrc::crash, "ocloc died of signal " + std::to_string(r.signal),
                          log);
            e->signal = r.signal;
            break;
        case ChildExit::exited:
            if (r.exit_code == 0) {
                return std::nullopt;
            }
            if (r.exit_code == 127 && mentions(log, "kcache-jit: cannot exec")) {
                e = aot_error(OclocErrc::spawn_failed, line_with(log, "cannot exec"), log);
            } else if (mentions(log, "Cannot get HW Info") ||
                       mentions(log, "Could not determine target") ||
                       mentions(log, "Failed to parse target")) {
                const char* why =
                    mentions(log, "Cannot get HW Info") ? "Cannot get HW Info" : "target";
                e = aot_error(OclocErrc::unsupported_target,
                              "the installed ocloc cannot compile for target '" + target +
                                  "': " + line_with(log, why),
                              log);
            } else if (mentions(log, "error:") || mentions(log, "Build failed")) {
                e = aot_error(OclocErrc::build_error, "ocloc: build failed for '" + target + "'",
                              log);
            } else {
                e = aot_error(OclocErrc::tool_failed,
                              "ocloc exited with code " + std::to_string(r.exit_code), log);
            }
            e->exit_code = r.exit_code;
            break;
    }
    return e;
}

// Picks up what ocloc wrote into `dir`: "<base>_<family>.bin" and ".spv" for
// one target; "<base>" (or "<base>.ar") for a fat binary.
Result<AotBinary, OclocError> collect(const fs::path& dir, const std::string& base, bool fat) {
    AotBinary out;
    std::optional<fs::path> binary;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename();
        if (name == base || name == base + ".ar" || entry.path().extension() == ".bin") {
            binary = entry.path();
        } else if (entry.path().extension() == ".spv") {
            out.spirv = read_file(entry.path()).value_or(std::string());
        }
    }
    if (!binary) {
        return fail(aot_error(OclocErrc::no_output, "ocloc exited 0 but wrote no binary"));
    }
    auto bytes = read_file(*binary);
    if (!bytes) {
        return fail(aot_error(OclocErrc::io_error, "cannot read " + binary->string()));
    }
    out.format = fat ? AotFormat::fat_binary : AotFormat::device_elf;
    out.binary = std::move(*bytes);
    if (fat) {
        if (auto c = check_fat_binary(out.binary); !c) {
            return fail(aot_error(OclocErrc::invalid_binary, "fat binary: " + c.error().message));
        }
    } else if (auto c = check_device_elf(out.binary); !c) {
        return fail(aot_error(OclocErrc::invalid_binary, "device binary: " + c.error().message));
    }
    return out;
}

}  // namespace

const char* to_string(OclocErrc k) {
    switch (k) {
        case OclocErrc::bad_target:
            return "bad target";
        case OclocErrc::unsupported_target:
            return "unsupported target";
        case OclocErrc::build_error:
            return "build error";
        case OclocErrc::timeout:
            return "timeout";
        case OclocErrc::crash:
            return "crash";
        case OclocErrc::no_output:
            return "no output";
        case OclocErrc::invalid_binary:
            return "invalid binary";
        case OclocErrc::spawn_failed:
            return "spawn failed";
        case OclocErrc::io_error:
            return "I/O error";
        case OclocErrc::tool_failed:
            return "ocloc failed";
    }
    return "?";
}

OclocCompiler::OclocCompiler(OclocConfig config) : config_(std::move(config)) {
    if (config_.guard_path.empty()) {
        config_.guard_path = default_helper_path();
    }
}

RunResult OclocCompiler::run_ocloc(const std::vector<std::string>& args, const std::string& cwd,
                                   Clock::time_point deadline) const {
    return run_guarded(config_.guard_path, config_.ocloc_path, args, cwd, deadline);
}

Result<AotBinary, OclocError> OclocCompiler::compile(const AotRequest& request,
                                                     Clock::time_point deadline) const {
    if (!valid_target(request.target)) {
        return fail(
            aot_error(OclocErrc::bad_target,
                      "'" + request.target + "' is not an ocloc target name, PCI id or list"));
    }
    auto dir = ScratchDir::create(config_.scratch_root);
    if (!dir || !write_file(dir->path() / "kernel.cl", request.source)) {
        return fail(aot_error(OclocErrc::io_error, "cannot prepare a scratch directory"));
    }
    const std::string cwd = dir->path().string();
    // Fat binaries ignore -out_dir and land in the working directory, so both
    // point at the scratch directory.
    std::vector<std::string> args = {"compile",  "-file", "kernel.cl", "-device", request.target,
                                     "-out_dir", cwd,     "-output",   "kernel"};
    if (!request.options.empty()) {
        args.insert(args.end(), {"-options", request.options});
    }
    const RunResult r = run_ocloc(args, cwd, deadline);
    if (auto e = classify(r, request.target)) {
        return fail(std::move(*e));
    }
    const bool fat = is_fat_target(request.target);
    auto out = collect(dir->path(), "kernel", fat);
    if (!out) {
        OclocError e = out.error();
        e.log = r.out + r.err;
        return fail(std::move(e));
    }
    out->log = r.out + r.err;
    if (out->spirv.empty()) {
        auto spirv = portable_spirv(request, dir->path(), deadline);
        if (!spirv) {
            return fail(spirv.error());
        }
        out->spirv = std::move(*spirv);
    }
    if (!looks_like_spirv(out->spirv)) {
        return fail(aot_error(OclocErrc::no_output, "ocloc wrote no SPIR-V", out->log));
    }
    out->elapsed = r.elapsed;
    return out;
}

Result<std::string, OclocError> OclocCompiler::portable_spirv(const AotRequest& request,
                                                              const std::filesystem::path& dir,
                                                              Clock::time_point deadline) const {
    // A fat build emits no SPIR-V; the front end's output for the first
    // target is the portable form.
    std::vector<std::string> args = {
        "compile",   "-file",    "kernel.cl",  "-device", first_target(request.target),
        "-spv_only", "-out_dir", dir.string(), "-output", "portable"};
    if (!request.options.empty()) {
        args.insert(args.end(), {"-options", request.options});
    }
    const RunResult r = run_ocloc(args, dir.string(), deadline);
    if (auto e = classify(r, request.target)) {
        return fail(std::move(*e));
    }
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (entry.path().extension() == ".spv") {
            return read_file(entry.path()).value_or(std::string());
        }
    }
    return std::string();
}

}  // namespace kcache::compiler
