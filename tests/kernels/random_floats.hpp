#pragma once
// Random floats for the conversion tests (host and device): half of them
// any bit pattern, the other half with the exponent moved into a band where
// a 16-bit type's rounding has something to do. Header-only: both the
// device-free and the PoCL test binaries use it.

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace kcache::test {

// `count` draws from `seed` (NaNs left out, so possibly fewer): the even
// draws get a biased exponent in [`exponent_lo`, `exponent_lo` + `exponent_span`).
inline std::vector<float> random_floats(std::uint32_t seed, int count, std::uint32_t exponent_lo,
                                        std::uint32_t exponent_span) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<std::uint32_t> any;
    std::vector<float> out;
    out.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        std::uint32_t u = any(rng);
        if (i % 2 == 0)
            u = (u & 0x807fffffu) | ((exponent_lo + u % exponent_span) << 23);
        const float f = std::bit_cast<float>(u);
        if (!std::isnan(f))
            out.push_back(f);
    }
    return out;
}

}  // namespace kcache::test
