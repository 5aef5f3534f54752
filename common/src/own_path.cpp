#include "kcache/common/own_path.hpp"

#include <dlfcn.h>

#include <cstring>

namespace kcache {

std::filesystem::path own_image_path(const void* address) {
    Dl_info info{};
    std::error_code ec;
    // dladdr names a shared library by the path it was loaded from; for the
    // main program it gives argv[0]-like text, often without a directory.
    if (::dladdr(address, &info) != 0 && info.dli_fname != nullptr &&
        std::strchr(info.dli_fname, '/') != nullptr) {
        auto p = std::filesystem::canonical(info.dli_fname, ec);
        if (!ec) {
            return p;
        }
    }
    auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::path() : exe;
}

}  // namespace kcache
