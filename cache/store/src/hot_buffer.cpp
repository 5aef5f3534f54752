// The memory a hot copy's bytes are read into. Memory the allocator has not
// handed out before (a process's first hits: the resident bytes keep each
// hit's; a large copy, above the allocator's mmap threshold) is faulted in
// a page at a time as the zero-fill first writes it: some 2 us a page on a
// virtual machine, 270 us for a 491 KB binary. Such memory is populated in
// one call first (madvise MADV_POPULATE_WRITE), about 0.1 ms less for that
// binary there; memory the allocator reuses is resident (one mincore call
// says so) and is left as it is. Best effort: MADV_POPULATE_WRITE is Linux
// 5.14 on, and the zero-fill faults in whatever it did not populate.

#include "hot_buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace kcache::store::hot {
namespace {

// Whether every page of [`begin`, `end`) (page-aligned) is resident.
bool pages_resident(std::uintptr_t begin, std::uintptr_t end, std::size_t page) {
    const std::size_t pages = (end - begin) / page;
    std::array<unsigned char, 256> few{};
    std::vector<unsigned char> many(pages > few.size() ? pages : 0);
    unsigned char* vec = many.empty() ? few.data() : many.data();
    return ::mincore(reinterpret_cast<void*>(begin), end - begin, vec) == 0 &&
           std::all_of(vec, vec + pages, [](unsigned char c) { return (c & 1) != 0; });
}

}  // namespace

Bytes hot_buffer(std::size_t n) {
    Bytes bytes;
#ifdef MADV_POPULATE_WRITE
    static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    if (n >= 4 * page) {  // below, a call or two costs what the faults do
        bytes.reserve(n);
        const auto at = reinterpret_cast<std::uintptr_t>(bytes.data());
        const std::uintptr_t begin = (at + page - 1) / page * page;
        const std::uintptr_t end = (at + n) / page * page;
        if (end > begin && !pages_resident(begin, end, page)) {
            (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
        }
    }
#endif
    bytes.resize(n);
    return bytes;
}

}  // namespace kcache::store::hot
