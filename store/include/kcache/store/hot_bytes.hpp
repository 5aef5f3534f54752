#pragma once
// A hot copy's bytes as read (Store::read_hot), with its header and key
// record. Read into memory that each thread reuses from one read to the
// next (Memory::reused: after a thread's first read its pages are faulted
// in, and nothing is zero-filled), which an object holds alone while it
// lives (a second object alive on the same thread gets memory of its own)
// and gives back to its thread when destroyed; or into memory the caller
// takes and keeps (Memory::kept: take() moves it out).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "kcache/store/types.hpp"

namespace kcache::store {

class HotBytes {
  public:
    enum class Memory { reused, kept };

    // Room for `head` bytes of header and `size` bytes, not initialized
    // (`Memory::kept`: the bytes zero-filled).
    HotBytes(std::size_t head, std::size_t size, Memory memory);
    HotBytes(HotBytes&& o) noexcept;
    HotBytes& operator=(HotBytes&& o) noexcept;
    HotBytes(const HotBytes&) = delete;
    HotBytes& operator=(const HotBytes&) = delete;
    ~HotBytes();

    // Where the header and the bytes are read into.
    std::span<std::uint8_t> head() noexcept { return {block_.get(), head_}; }
    std::span<std::uint8_t> room() noexcept {
        return keeps_ ? std::span<std::uint8_t>(kept_) : std::span(block_.get() + head_, size_);
    }
    std::span<const std::uint8_t> bytes() const noexcept {
        return keeps_ ? std::span<const std::uint8_t>(kept_)
                      : std::span<const std::uint8_t>(block_.get() + head_, size_);
    }
    // The bytes in memory the caller keeps: moved out (Memory::kept, after
    // which bytes() is empty), else copied.
    Bytes take();

  private:
    void give_back() noexcept;

    std::unique_ptr<std::uint8_t[]> block_;  // the header (and, reused, the bytes)
    std::size_t capacity_ = 0;               // of block_
    std::size_t head_ = 0;
    std::size_t size_ = 0;
    bool keeps_ = false;
    Bytes kept_;  // Memory::kept: the bytes
};

}  // namespace kcache::store
