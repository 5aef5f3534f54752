// HotBytes (hot_bytes.hpp): the memory hot copies are read into, one spare
// block per thread, and the copies made of them.

#include "kcache/store/hot_bytes.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <utility>
#include <vector>

#include "thread_slots.hpp"

namespace kcache::store {
namespace {

// A block up to this size goes back to its thread for the next read;
// larger ones are freed (a thread keeps at most one block).
constexpr std::size_t kKeepMax = 4u << 20;

// The thread's spare block: taken by a HotBytes, given back when it goes;
// freed with the thread (thread_slots.hpp).
thread_local std::uint8_t* t_spare = nullptr;
thread_local std::size_t t_spare_capacity = 0;
void free_spare() {
    delete[] std::exchange(t_spare, nullptr);
    t_spare_capacity = 0;
}

// Whether every page of [`begin`, `end`) (page-aligned) is resident.
bool pages_resident(std::uintptr_t begin, std::uintptr_t end, std::size_t page) {
    const std::size_t pages = (end - begin) / page;
    std::array<unsigned char, 256> few{};
    std::vector<unsigned char> many(pages > few.size() ? pages : 0);
    unsigned char* vec = many.empty() ? few.data() : many.data();
    return ::mincore(reinterpret_cast<void*>(begin), end - begin, vec) == 0 &&
           std::all_of(vec, vec + pages, [](unsigned char c) { return (c & 1) != 0; });
}

// Memory the allocator has not handed out before (a process's first hits;
// a large copy, above the allocator's mmap threshold) is faulted in a page
// at a time as a read or copy first writes it: some 2 us a page on a
// virtual machine, 270 us for a 491 KB binary. Such memory is populated in
// one call first (madvise MADV_POPULATE_WRITE), about 0.1 ms less for that
// binary there; memory the allocator reuses is resident (one mincore call
// says so) and is left as it is. Best effort: MADV_POPULATE_WRITE is Linux
// 5.14 on, and the write faults in whatever it did not populate.
void populate(std::uint8_t* at, std::size_t n) {
#ifdef MADV_POPULATE_WRITE
    static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    if (n < 4 * page) {
        return;  // a call or two costs what the faults do
    }
    const auto first = reinterpret_cast<std::uintptr_t>(at);
    const std::uintptr_t begin = (first + page - 1) / page * page;
    const std::uintptr_t end = (first + n) / page * page;
    if (end > begin && !pages_resident(begin, end, page)) {
        (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
    }
#else
    (void)at;
    (void)n;
#endif
}

}  // namespace

HotBytes::HotBytes(std::size_t head, std::size_t size, Memory memory)
    : head_(head), size_(size), keeps_(memory == Memory::kept) {
    const std::size_t block = keeps_ ? head : head + size;
    if (keeps_) {
        kept_.reserve(size);
        populate(kept_.data(), size);
        kept_.resize(size);
    } else if (t_spare_capacity >= block && thread_slots_open<free_spare>()) {
        block_.reset(std::exchange(t_spare, nullptr));
        capacity_ = std::exchange(t_spare_capacity, 0);
        return;
    }
    // Grown to a power of two, so that copies of about the same size reuse it.
    capacity_ = block <= kKeepMax ? std::bit_ceil(std::max<std::size_t>(block, 4096)) : block;
    block_ = std::make_unique_for_overwrite<std::uint8_t[]>(capacity_);
    populate(block_.get(), block);
}

HotBytes::HotBytes(HotBytes&& o) noexcept
    : block_(std::move(o.block_)),
      capacity_(std::exchange(o.capacity_, 0)),
      head_(std::exchange(o.head_, 0)),
      size_(std::exchange(o.size_, 0)),
      keeps_(std::exchange(o.keeps_, false)),
      kept_(std::move(o.kept_)) {}

HotBytes& HotBytes::operator=(HotBytes&& o) noexcept {
    if (this != &o) {
        give_back();
        block_ = std::move(o.block_);
        capacity_ = std::exchange(o.capacity_, 0);
        head_ = std::exchange(o.head_, 0);
        size_ = std::exchange(o.size_, 0);
        keeps_ = std::exchange(o.keeps_, false);
        kept_ = std::move(o.kept_);
    }
    return *this;
}

HotBytes::~HotBytes() {
    give_back();
}

// The larger block stays the thread's spare (at most kKeepMax).
void HotBytes::give_back() noexcept {
    if (block_ != nullptr && capacity_ <= kKeepMax && capacity_ > t_spare_capacity &&
        thread_slots_open<free_spare>()) {
        delete[] std::exchange(t_spare, block_.release());
        t_spare_capacity = capacity_;
    }
    block_.reset();
    kept_.clear();
    capacity_ = head_ = size_ = 0;
}

Bytes HotBytes::take() {
    if (keeps_) {
        size_ = 0;
        return std::move(kept_);
    }
    const auto from = bytes();
    Bytes out;
    out.reserve(from.size());
    populate(out.data(), from.size());
    out.assign(from.begin(), from.end());  // within the capacity reserved
    return out;
}

}  // namespace kcache::store
