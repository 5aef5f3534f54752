#include "fault_reads.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace kcache::test {
namespace {

// One element type as bit patterns: its width, significand bits and where
// its bits sit (a float's sign-magnitude order; int8 is two's complement).
struct Type {
    std::size_t width = 4;
    int digits = 24;
    bool integer = false;
};

bool type_of(const std::string& name, Type& t) {
    if (name.empty() || name == "f32") {
        t = {4, 24, false};
    } else if (name == "f16") {
        t = {2, 11, false};
    } else if (name == "bf16") {
        t = {2, 8, false};
    } else if (name == "i8") {
        t = {1, 0, true};
    } else {
        return false;
    }
    return true;
}

std::uint32_t bits_at(const unsigned char* p, const Type& t) {
    std::uint32_t v = 0;
    std::memcpy(&v, p, t.width);
    return v;
}

void set_bits(unsigned char* p, const Type& t, std::uint32_t v) {
    std::memcpy(p, &v, t.width);
}

// `v`'s magnitude moved by `steps` ulps (positive: away from zero), its sign
// kept; zeros, infinities and NaNs stay.
std::uint32_t step(std::uint32_t v, const Type& t, long steps) {
    const std::uint32_t sign = 1u << (t.width * 8 - 1);
    const std::uint32_t magnitude = v & (sign - 1);
    const std::uint32_t exponent_all = (sign - 1) & ~((1u << (t.digits - 1)) - 1);
    if (magnitude == 0 || (magnitude & exponent_all) == exponent_all ||
        (steps < 0 && magnitude <= static_cast<std::uint32_t>(-steps))) {
        return v;
    }
    return (v & sign) | (magnitude + static_cast<std::uint32_t>(steps));
}

// Each element's value as a double and back (floats only).
double value_of(std::uint32_t v, const Type& t) {
    if (t.width == 4) {
        float f;
        std::memcpy(&f, &v, 4);
        return f;
    }
    const std::uint32_t wide = t.digits == 8 ? v << 16 : 0;
    if (t.digits == 8) {
        float f;
        std::memcpy(&f, &wide, 4);
        return f;
    }
    // f16: sign, 5 exponent bits, 10 fraction bits.
    const int e = static_cast<int>((v >> 10) & 0x1f);
    const double frac = static_cast<double>(v & 0x3ff);
    const double mag = e == 0 ? std::ldexp(frac, -24) : std::ldexp(1024.0 + frac, e - 25);
    return (v & 0x8000) != 0 ? -mag : mag;
}

// `v` moved away from zero until its magnitude is at least `factor` times
// the original and at least `min_steps` ulps away.
std::uint32_t grown(std::uint32_t v, const Type& t, double factor, long min_steps) {
    const double target = std::fabs(value_of(v, t)) * factor;
    if (t.width == 4) {  // f32: the product itself, rounded up by one step
        float x;
        std::memcpy(&x, &v, 4);
        const float y = static_cast<float>(x * factor);
        std::uint32_t w;
        std::memcpy(&w, &y, 4);
        return step(w, t, std::max(1L, min_steps - static_cast<long>(w - v)));
    }
    std::uint32_t w = v;
    for (long k = 0; k < 64 && (k < min_steps || std::fabs(value_of(w, t)) < target); ++k) {
        w = step(w, t, 1);
    }
    return w;
}

// The faults' sizes per type, in the type's own terms: wrong by more than
// any tolerance allows (4 ulps, plus the accumulation term of reductions).
double scale_factor(const Type& t) {
    return 1 + std::max(0x1p-10, std::ldexp(1.0, 4 - t.digits));  // f32 1.001, f16 8 ulps
}

void scale_all(unsigned char* data, std::size_t n, const Type& t) {
    for (std::size_t i = 0; i < n; ++i) {
        unsigned char* p = data + i * t.width;
        if (t.integer) {
            p[0] = static_cast<unsigned char>(p[0] + 1);
        } else {
            set_bits(p, t, grown(bits_at(p, t), t, scale_factor(t), 8));
        }
    }
}

}  // namespace

bool alter_read(const std::string& kind, const std::string& type_name, unsigned char* data,
                std::size_t size) {
    Type t;
    if (!type_of(type_name, t)) {
        return false;
    }
    const std::size_t n = size / t.width;
    if (n == 0) {
        return true;
    }
    const std::size_t at = n * 2 / 3;
    const std::uint32_t high = t.integer ? 0x40u : 1u << (t.width * 8 - 2);
    if (kind == "zero") {
        std::memset(data, 0, size);
    } else if (kind == "flip97") {
        for (std::size_t i = 0; i < n; i += 97) {
            set_bits(data + i * t.width, t, bits_at(data + i * t.width, t) ^ high);
        }
    } else if (kind == "scale") {
        scale_all(data, n, t);
    } else if (kind == "tail16") {
        const std::size_t from = n - n / 16;
        std::memset(data + from * t.width, 0, (n - from) * t.width);
    } else if (kind == "nan1" || kind == "one") {
        unsigned char* p = data + at * t.width;
        if (t.integer) {
            p[0] = static_cast<unsigned char>(p[0] + (kind == "nan1" ? 64 : 1));
        } else if (kind == "nan1") {
            set_bits(p, t, (1u << (t.width * 8 - 1)) - 1);  // all exponent and fraction bits
        } else {
            // 16 ulps and at least 1/64 of its value.
            const std::uint32_t v = bits_at(p, t);
            set_bits(p, t, v == 0 ? high : grown(v, t, 1 + 0x1p-6, 16));
        }
    } else if (kind == "swap") {
        std::size_t j = n - 2;
        while (j > 1 && std::memcmp(data + t.width, data + j * t.width, t.width) == 0) {
            --j;
        }
        unsigned char tmp[4];
        std::memcpy(tmp, data + t.width, t.width);
        std::memcpy(data + t.width, data + j * t.width, t.width);
        std::memcpy(data + j * t.width, tmp, t.width);
    } else if (!t.integer && (kind == "ulp+1" || kind == "ulp-2" || kind == "ulp~2")) {
        for (std::size_t i = 0; i < n; ++i) {
            unsigned char* p = data + i * t.width;
            const long steps = kind == "ulp+1" ? 1 : kind == "ulp-2" ? -2 : (i % 2 ? 2 : -2);
            set_bits(p, t, step(bits_at(p, t), t, steps));
        }
    } else {
        return false;
    }
    return true;
}

}  // namespace kcache::test
