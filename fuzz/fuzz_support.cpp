#include "fuzz_support.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <system_error>

namespace kcache::fuzz {
namespace fs = std::filesystem;

void finding(std::string_view what) {
    std::fprintf(stderr, "fuzz finding: %.*s\n", static_cast<int>(what.size()), what.data());
    std::abort();
}

namespace {

// Owns the scratch directory; removes it when the process exits normally.
struct Scratch {
    fs::path path;
    Scratch() {
        std::string tmpl = (fs::temp_directory_path() / "kcache-fuzz-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) {
            finding("cannot create a scratch directory under " + tmpl);
        }
        path = tmpl;
    }
    ~Scratch() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

}  // namespace

const fs::path& scratch_dir() {
    static Scratch scratch;
    return scratch.path;
}

void write_file(const fs::path& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    check(out.good(), "cannot write " + path.string());
}

void clear_dir(const fs::path& dir) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        fs::remove_all(entry.path(), ec);
    }
}

}  // namespace kcache::fuzz
