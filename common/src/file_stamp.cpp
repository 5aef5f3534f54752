#include "kcache/common/file_stamp.hpp"

#include <sys/stat.h>

namespace kcache {
namespace {

std::int64_t ns(const timespec& t) {
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

}  // namespace

FileStamp stamp_of(const std::filesystem::path& file) noexcept {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
        return {};
    }
    return {true,
            static_cast<std::uint64_t>(st.st_dev),
            static_cast<std::uint64_t>(st.st_ino),
            static_cast<std::int64_t>(st.st_size),
            ns(st.st_mtim),
            ns(st.st_ctim)};
}

}  // namespace kcache
