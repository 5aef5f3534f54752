#include <openssl/evp.h>

#include <fstream>
#include <memory>

#include "kcache/compiler/ocloc.hpp"
#include "scratch_dir.hpp"

namespace kcache::compiler {
namespace {

namespace fs = std::filesystem;

struct MdCtxFree {
    void operator()(EVP_MD_CTX* c) const noexcept { EVP_MD_CTX_free(c); }
};

// Lowercase hex SHA-256 of the file at `path`; empty when unreadable.
std::string sha256_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
    if (!in || !ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
        return {};
    }
    std::string buf(1 << 20, '\0');
    while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
        EVP_DigestUpdate(ctx.get(), buf.data(), static_cast<std::size_t>(in.gcount()));
    }
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    if (in.bad() || EVP_DigestFinal_ex(ctx.get(), md, &n) != 1) {
        return {};
    }
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < n; ++i) {
        out += hex[md[i] >> 4];
        out += hex[md[i] & 15];
    }
    return out;
}

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
    const auto version = read_file(dir->path() / "OCL_DRIVER_VERSION");
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
    id.igc_sha256 = sha256_file(*igc);
    if (id.igc_sha256.empty()) {
        return fail(OclocError{OclocErrc::io_error, "cannot read " + id.igc_path, {}, -1, 0});
    }
    if (const auto fcl = find_library(config_.library_dir,
                                      {"libigdfcl.so.2", "libigdfcl.so.1", "libigdfcl.so"})) {
        id.frontend_sha256 = sha256_file(*fcl);
    }
    return id;
}

}  // namespace kcache::compiler
