#pragma once
// The counters file of a store (counters_path, service.hpp): one line
// `NAME COUNT` per verdict, which every process the layer runs in adds to.

#include <array>
#include <string>

namespace kcache::layer {

// The verdicts' names in the file, in the order of Verdict.
inline constexpr std::array<const char*, 4> kVerdictNames = {"hit", "jit", "fail", "pass"};
using Counts = std::array<unsigned long long, kVerdictNames.size()>;

// Adds `add` to the counts of the file at `path` (made when missing) under an
// exclusive lock; leaves it as it was when it cannot be opened or locked.
void add_counts(const std::string& path, const Counts& add);

}  // namespace kcache::layer
