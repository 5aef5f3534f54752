#pragma once
// What every harness shares: the libFuzzer entry point's declaration, a
// finding (print and abort, so libFuzzer and the replay tests both stop), a
// reader that turns fuzz bytes into typed values, and a private scratch
// directory for harnesses that must hand a file to the code under test.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace kcache::fuzz {

// Reports a broken invariant `what` and aborts: a finding, like a crash.
[[noreturn]] void finding(std::string_view what);

// Aborts with `what` unless `ok`.
inline void check(bool ok, std::string_view what) {
    if (!ok) {
        finding(what);
    }
}

// Reads typed values off the fuzz input; past the end every read yields
// zeros and empty strings, so a harness never has to check for exhaustion.
class Bytes {
  public:
    Bytes(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

    std::uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
    std::uint32_t u32() {
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            v |= std::uint32_t{u8()} << (8 * i);
        }
        return v;
    }
    // A string of up to 255 bytes (its length is the next byte).
    std::string str() { return take(u8()); }
    // Up to `n` bytes, fewer at the end of the input.
    std::string take(std::size_t n) {
        n = std::min(n, size_ - pos_);
        std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
        pos_ += n;
        return s;
    }
    // Everything not read yet.
    std::string rest() { return take(size_ - pos_); }
    bool empty() const { return pos_ >= size_; }

  private:
    const std::uint8_t* data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

// A directory private to this process (created 0700 on first use, removed at
// exit), for the files a harness writes.
const std::filesystem::path& scratch_dir();

// Writes `bytes` to `path` (replacing it); aborts when that fails.
void write_file(const std::filesystem::path& path, std::string_view bytes);

// Removes everything inside `dir`, keeping `dir` itself.
void clear_dir(const std::filesystem::path& dir);

}  // namespace kcache::fuzz
