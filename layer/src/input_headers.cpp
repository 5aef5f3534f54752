// clCompileProgram's input headers as files the JIT can read: the headers'
// sources are written under `<store>/layer-includes/headers/<digest>/NAME`,
// where the digest is of every header's name and content, and the compile
// the cache keys and builds searches that directory first (`-I`). The key
// then holds the headers by name and content twice over: in the directory's
// name, and in the digest of the included files (build.cpp).

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "build.hpp"
#include "kcache/common/sha256.hpp"

namespace kcache::layer {
namespace {

// A name an `#include "NAME"` can find below a directory: relative, no `..`.
bool plain_relative(const std::string& name) {
    if (name.empty() || name.front() == '/' || name.find(' ') != std::string::npos) {
        return false;
    }
    for (const auto& part : std::filesystem::path(name)) {
        if (part == "..") {
            return false;
        }
    }
    return true;
}

// Writes `text` at `path` unless a file is there (the directory is named by
// its contents): to a file of this process's, then renamed into place.
bool write_once(const std::filesystem::path& path, const std::string& text) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
        return true;
    }
    std::filesystem::create_directories(path.parent_path(), ec);
    const std::filesystem::path temporary = path.string() + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        if (!out.flush()) {
            return false;
        }
    }
    std::filesystem::rename(temporary, path, ec);
    return !ec;
}

}  // namespace

std::string input_headers_dir(cl_uint count, const cl_program* headers, const char** names,
                              std::string& why) {
    if (includes_dir().empty() || includes_dir().find(' ') != std::string::npos) {
        why = "input headers and no store directory to keep them in";
        return {};
    }
    if (headers == nullptr || names == nullptr) {
        why = "input headers without their names";
        return {};
    }
    std::vector<std::pair<std::string, std::string>> files;
    std::string all;
    for (cl_uint i = 0; i < count; ++i) {
        LayerProgram* h = as_layer(headers[i]);
        if (h == nullptr || names[i] == nullptr || !plain_relative(names[i])) {
            why = "an input header not from source or not named as a relative path";
            return {};
        }
        std::string text;
        {
            std::lock_guard lock(h->mutex);
            text = h->request.source.substr(0, h->source_size);
        }
        all += std::string(names[i]) + '\0' + std::to_string(text.size()) + '\0' + text;
        files.emplace_back(names[i], std::move(text));
    }
    const std::filesystem::path dir =
        std::filesystem::path(includes_dir()) / "headers" / sha256_hex(all).substr(0, 32);
    for (const auto& [name, text] : files) {
        if (!write_once(dir / name, text)) {
            why = "input headers that cannot be written to " + dir.string();
            return {};
        }
    }
    return dir.string();
}

}  // namespace kcache::layer
