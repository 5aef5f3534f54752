#pragma once
// The table that cmake/embed_kernels.cmake generates: every kernels/cl file by
// name with its exact bytes.

#include <cstddef>
#include <string_view>

namespace kcache::kernels {

struct EmbeddedFile {
    std::string_view name;
    std::string_view text;
};

extern const EmbeddedFile kEmbeddedFiles[];
extern const std::size_t kEmbeddedFileCount;

}  // namespace kcache::kernels
