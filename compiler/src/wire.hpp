#pragma once
// Little-endian writer and bounds-checked reader for the helper's frames.
// The reader never reads past its input: every get_* returns false once a
// field would overrun, and the first failure names the field.

#include <cstdint>
#include <string>
#include <string_view>

namespace kcache::compiler::wire {

class Writer {
  public:
    void u8(std::uint8_t v) { out_.push_back(static_cast<char>(v)); }
    void u32(std::uint32_t v) { put(v, 4); }
    void u64(std::uint64_t v) { put(v, 8); }
    // u32 length, then the bytes.
    void str(std::string_view s) {
        u32(static_cast<std::uint32_t>(s.size()));
        out_.append(s);
    }
    // u64 length, then the bytes.
    void blob(std::string_view s) {
        u64(s.size());
        out_.append(s);
    }
    std::string take() { return std::move(out_); }

  private:
    void put(std::uint64_t v, int bytes) {
        for (int i = 0; i < bytes; ++i) {
            out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
        }
    }
    std::string out_;
};

class Reader {
  public:
    explicit Reader(std::string_view in) : in_(in) {}

    bool u8(std::uint8_t& v, const char* field) {
        std::uint64_t x = 0;
        return get(x, 1, field) && (v = static_cast<std::uint8_t>(x), true);
    }
    bool u32(std::uint32_t& v, const char* field) {
        std::uint64_t x = 0;
        return get(x, 4, field) && (v = static_cast<std::uint32_t>(x), true);
    }
    bool u64(std::uint64_t& v, const char* field) { return get(v, 8, field); }
    bool str(std::string& s, const char* field) {
        std::uint32_t n = 0;
        return u32(n, field) && bytes(s, n, field);
    }
    bool blob(std::string& s, const char* field) {
        std::uint64_t n = 0;
        return u64(n, field) && bytes(s, n, field);
    }
    // A u8 that must be 0 or 1.
    bool flag(bool& b, const char* field) {
        std::uint8_t v = 0;
        if (!u8(v, field)) {
            return false;
        }
        if (v > 1) {
            return fail(field, "is not 0 or 1");
        }
        b = v == 1;
        return true;
    }
    // Records a semantic failure of `field`; returns false.
    bool fail(const char* field, const char* what) {
        if (error_.empty()) {
            error_ = std::string(field) + " " + what;
        }
        return false;
    }
    bool at_end() const { return pos_ == in_.size(); }
    std::size_t remaining() const { return in_.size() - pos_; }
    const std::string& error() const { return error_; }

  private:
    bool get(std::uint64_t& v, int n, const char* field) {
        if (remaining() < static_cast<std::size_t>(n)) {
            return fail(field, "is truncated");
        }
        v = 0;
        for (int i = 0; i < n; ++i) {
            v |= std::uint64_t(static_cast<unsigned char>(in_[pos_ + i])) << (8 * i);
        }
        pos_ += n;
        return true;
    }
    bool bytes(std::string& s, std::uint64_t n, const char* field) {
        if (remaining() < n) {
            return fail(field, "length runs past the end of the frame");
        }
        s.assign(in_.substr(pos_, n));
        pos_ += n;
        return true;
    }

    std::string_view in_;
    std::size_t pos_ = 0;
    std::string error_;
};

}  // namespace kcache::compiler::wire
