#pragma once
// A hot copy's bytes as read (Store::read_hot), in memory that each thread
// reuses from one read to the next: after a thread's first read its pages
// are faulted in, and nothing is zero-filled. An object holds that memory
// alone while it lives (a second object alive on the same thread gets
// memory of its own), and gives it back to its thread when destroyed.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "kcache/store/types.hpp"

namespace kcache::store {

class HotBytes {
  public:
    // `size` bytes of this thread's reused memory (grown if smaller), not
    // initialized.
    explicit HotBytes(std::size_t size);
    HotBytes(HotBytes&& o) noexcept;
    HotBytes& operator=(HotBytes&& o) noexcept;
    HotBytes(const HotBytes&) = delete;
    HotBytes& operator=(const HotBytes&) = delete;
    ~HotBytes();

    // The whole memory (to read into), or the part after its first `skip()`
    // bytes.
    std::span<std::uint8_t> all() noexcept { return {data_.get(), size_}; }
    std::span<const std::uint8_t> bytes() const noexcept {
        return std::span<const std::uint8_t>(data_.get(), size_).subspan(skip_);
    }
    // Makes bytes() start `n` (<= size) bytes in.
    void skip(std::size_t n) noexcept { skip_ = n < size_ ? n : size_; }
    // A copy of bytes() in memory of its own, which the caller keeps.
    Bytes copy() const;

  private:
    void give_back() noexcept;

    std::unique_ptr<std::uint8_t[]> data_;
    std::size_t capacity_ = 0;
    std::size_t size_ = 0;
    std::size_t skip_ = 0;
};

}  // namespace kcache::store
