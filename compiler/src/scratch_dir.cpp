#include "scratch_dir.hpp"

#include <stdlib.h>

#include <fstream>
#include <vector>

#include "kcache/common/read_file.hpp"

namespace kcache::compiler {

std::optional<ScratchDir> ScratchDir::create(const std::string& root) {
    std::string pattern = (root.empty() ? std::string("/tmp") : root) + "/kcache-ocloc-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) {
        return std::nullopt;
    }
    return ScratchDir(std::filesystem::path(buf.data()));
}

ScratchDir::~ScratchDir() {
    if (!path_.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
}

bool write_file(const std::filesystem::path& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    return static_cast<bool>(out);
}

std::optional<std::string> read_file(const std::filesystem::path& path, std::size_t max_bytes) {
    auto bytes = read_regular_file(path, max_bytes);
    if (!bytes) {
        return std::nullopt;
    }
    return std::move(*bytes);
}

RunResult run_guarded(const std::string& guard, const std::string& tool,
                      const std::vector<std::string>& args, const std::string& cwd,
                      Clock::time_point deadline) {
    SpawnSpec spec;
    spec.program = guard;
    spec.args = {"--exec-guard", "--", tool};
    spec.args.insert(spec.args.end(), args.begin(), args.end());
    spec.working_dir = cwd;
    spec.stdout_limit = 16u << 20;
    spec.stderr_limit = 16u << 20;
    return run(spec, deadline);
}

}  // namespace kcache::compiler
