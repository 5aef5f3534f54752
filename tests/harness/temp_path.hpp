#pragma once
// A fresh, uniquely named temporary directory, for tests and benchmarks
// alike (no GoogleTest here: tests/support/temp_dir.hpp builds the per-test
// fixture on it).

#include <filesystem>
#include <string>

namespace kcache::test {

// Creates a unique directory under $TMPDIR (or /tmp) named after `tag`;
// throws std::runtime_error when it cannot.
std::filesystem::path make_temp_dir(const std::string& tag);

}  // namespace kcache::test
