#pragma once
// A private temporary directory for one run of an offline compiler (ocloc,
// clang and llvm-spirv), removed with everything in it when the owner goes
// away (move-only), and the run of such a tool under the exec guard.

#include <filesystem>
#include <optional>
#include <string>

#include "kcache/compiler/jit_protocol.hpp"
#include "kcache/compiler/subprocess.hpp"

namespace kcache::compiler {

class ScratchDir {
  public:
    // Creates "<root>/kcache-ocloc-XXXXXX" (root empty: /tmp);
    // nullopt when that fails.
    static std::optional<ScratchDir> create(const std::string& root);

    ScratchDir(ScratchDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
    ScratchDir& operator=(ScratchDir&&) = delete;
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    ~ScratchDir();

    const std::filesystem::path& path() const { return path_; }

  private:
    explicit ScratchDir(std::filesystem::path p) : path_(std::move(p)) {}
    std::filesystem::path path_;
};

// Writes `bytes` to `path`; false on any I/O failure.
bool write_file(const std::filesystem::path& path, const std::string& bytes);
// The whole regular file at `path` when it holds at most `max_bytes` (by
// default the most a compile may return), through the bounded reader; nullopt
// when it cannot be read, is not a regular file (a FIFO ocloc left behind
// is refused without waiting) or is larger.
std::optional<std::string> read_file(const std::filesystem::path& path,
                                     std::size_t max_bytes = kMaxReplyPayload);

// Runs the offline tool `tool` with `args` in `cwd` through the exec guard
// `guard` (`kcache-jit --exec-guard`: the tool dies with its parent) by
// `deadline`, keeping up to 16 MiB of each output stream.
RunResult run_guarded(const std::string& guard, const std::string& tool,
                      const std::vector<std::string>& args, const std::string& cwd,
                      Clock::time_point deadline);

}  // namespace kcache::compiler
