#include <fstream>
#include <memory>

#include "kcache/common/sha256.hpp"
#include "kcache/compiler/ocloc.hpp"
#include "scratch_dir.hpp"

namespace kcache::compiler {
namespace {

namespace fs = std::filesystem;

// The file a library name resolves to in the first directory that has it,
// searched the way the dynamic loader does for ocloc's dlopen of IGC.
std::optional<fs::path> find_library(const std::string& first_dir,
                                     std::initializer_list<const char*> names) {
    std::vector<std::string> dirs = {"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
                                     "/usr/local/lib", "/usr/lib64", "/usr/lib"};
    if (!first_dir.empty()) {
        dirs.insert(dirs.begin(), first_dir);
    }
    for (const auto& dir : dirs) {
        for (const char* name : names) {
            std::error_code ec;
            const fs::path real = fs::canonical(fs::path(dir) / name, ec);
            if (!ec && fs::is_regular_file(real, ec)) {
                return real;
            }
        }
    }
    return std::nullopt;
}

// `s` up to its first NUL (ocloc writes one), without surrounding blanks.
std::string trimmed(std::string s) {
    s = s.substr(0, s.find('\0'));
    const auto end = s.find_last_not_of(" \t\r\n");
    s.erase(end == std::string::npos ? 0 : end + 1);
    return s.substr(std::min(s.size(), s.find_first_not_of(" \t\r\n")));
}

}  // namespace

std::string CompilerIdentity::to_string() const {
    return "ocloc " + ocloc_version + " igc " + igc_sha256 + " fcl " + frontend_sha256;
}

Result<CompilerIdentity, OclocError> OclocCompiler::identity(Clock::time_point deadline) const {
    auto dir = ScratchDir::create(config_.scratch_root);
    if (!dir) {
        return fail(OclocError{OclocErrc::io_error, "cannot make a scratch directory", {}, -1, 0});
    }
    // `ocloc query` writes its answer into a file in the working directory.
    const RunResult r = run_ocloc({"query", "OCL_DRIVER_VERSION"}, dir->path().string(), deadline);
    const auto version = read_file(dir->path() / "OCL_DRIVER_VERSION", 4096);
    if (r.outcome != ChildExit::exited || r.exit_code != 0 || !version ||
        trimmed(*version).empty()) {
        return fail(OclocError{OclocErrc::tool_failed,
                               std::string("ocloc query OCL_DRIVER_VERSION failed (") +
                                   to_string(r.outcome) + ", exit code " +
                                   std::to_string(r.exit_code) + ")",
                               r.out + r.err, r.exit_code, r.signal});
    }
    CompilerIdentity id;
    id.ocloc_version = trimmed(*version);
    const auto igc = find_library(config_.library_dir, {"libigc.so.2", "libigc.so.1", "libigc.so"});
    if (!igc) {
        return fail(OclocError{OclocErrc::tool_failed, "libigc.so not found", {}, -1, 0});
    }
    id.igc_path = igc->string();
    id.igc_sha256 = sha256_file_hex(*igc).value_or("");
    if (id.igc_sha256.empty()) {
        return fail(OclocError{OclocErrc::io_error, "cannot read " + id.igc_path, {}, -1, 0});
    }
    if (const auto fcl = find_library(config_.library_dir,
                                      {"libigdfcl.so.2", "libigdfcl.so.1", "libigdfcl.so"})) {
        id.frontend_sha256 = sha256_file_hex(*fcl).value_or("");
    }
    return id;
}

}  // namespace kcache::compiler
