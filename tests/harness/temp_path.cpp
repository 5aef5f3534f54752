#include "temp_path.hpp"

#include <stdlib.h>

#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace kcache::test {

std::filesystem::path make_temp_dir(const std::string& tag) {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/kcache-" + tag + "-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr) {
        throw std::runtime_error("mkdtemp failed for " + pattern);
    }
    return std::filesystem::path(buf.data());
}

}  // namespace kcache::test
