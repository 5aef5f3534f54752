#pragma once
// A private temporary directory for one ocloc run, removed with everything
// in it when the owner goes away. Move-only.

#include <filesystem>
#include <optional>
#include <string>

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
// The whole file, or nullopt when it cannot be read.
std::optional<std::string> read_file(const std::filesystem::path& path);

}  // namespace kcache::compiler
