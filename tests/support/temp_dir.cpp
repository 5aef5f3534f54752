#include "temp_dir.hpp"

#include <cstdio>

namespace kcache::test {

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
