#include "temp_dir.hpp"

#include <stdlib.h>

#include <cstdio>
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

void TempDirTest::SetUp() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string tag = std::string(info->test_suite_name()) + "." + info->name();
    for (char& c : tag) {
        if (c == '/') {
            c = '_';
        }
    }
    dir_ = make_temp_dir(tag);
}

void TempDirTest::TearDown() {
    if (HasFailure()) {
        std::fprintf(stderr, "[kept] test directory: %s\n", dir_.c_str());
        return;
    }
    std::error_code ec;
    // Make everything writable again so chmod'ed fixtures can be removed.
    for (auto it = std::filesystem::recursive_directory_iterator(dir_, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
        std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ec);
    }
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(dir_, ec);
}

}  // namespace kcache::test
