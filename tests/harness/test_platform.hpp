#pragma once
// Which OpenCL platform the device tests run on: PoCL by default (what CI
// has), or the platform named by KCACHE_TEST_PLATFORM (a substring of its
// name, e.g. "NVIDIA") to run the same tests on a real GPU by hand.

#include <cstdlib>
#include <string>

namespace kcache::test {

inline std::string test_platform_name() {
    const char* v = std::getenv("KCACHE_TEST_PLATFORM");
    return v && *v ? v : "Portable Computing Language";
}

}  // namespace kcache::test
