#pragma once
// Where the running code lives, for finding files installed beside it.

#include <filesystem>

namespace kcache {

// Returns the canonical path of the executable or shared library that holds
// `address` (a function of the caller's image), or an empty path when it
// cannot be known. A program started through PATH has only its bare name in
// the loader's records; /proc/self/exe names it then.
std::filesystem::path own_image_path(const void* address);

}  // namespace kcache
