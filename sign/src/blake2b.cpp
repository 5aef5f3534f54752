// BLAKE2b as specified by RFC 7693 (unkeyed, any output length up to 64
// bytes), for the one digest OpenSSL 3.0 does not offer: BLAKE2b-256. Only
// short inputs pass through here (a 74-byte key checksum); file hashes use
// OpenSSL's EVP_blake2b512.

#include <cstring>

#include "signature_internal.hpp"

namespace kcache::sign::detail {
namespace {

constexpr std::size_t kBlock = 128;

// The initialization vector: SHA-512's (RFC 7693 section 2.6).
constexpr std::uint64_t kIv[8] = {
    0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull, 0xa54ff53a5f1d36f1ull,
    0x510e527fade682d1ull, 0x9b05688c2b3e6c1full, 0x1f83d9abfb41bd6bull, 0x5be0cd19137e2179ull};

// Message word schedule per round (section 2.7); rounds 10 and 11 reuse 0 and 1.
constexpr std::uint8_t kSigma[10][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
};

std::uint64_t rotr(std::uint64_t x, int n) {
    return (x >> n) | (x << (64 - n));
}

std::uint64_t load_le64(const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) {
        v = (v << 8) | p[i];
    }
    return v;
}

// The mixing function G (section 3.1).
void mix(std::uint64_t* v, int a, int b, int c, int d, std::uint64_t x, std::uint64_t y) {
    v[a] = v[a] + v[b] + x;
    v[d] = rotr(v[d] ^ v[a], 32);
    v[c] = v[c] + v[d];
    v[b] = rotr(v[b] ^ v[c], 24);
    v[a] = v[a] + v[b] + y;
    v[d] = rotr(v[d] ^ v[a], 16);
    v[c] = v[c] + v[d];
    v[b] = rotr(v[b] ^ v[c], 63);
}

// The compression function F (section 3.2); `bytes` counts the input so far
// (inputs here are far below 2^64 bytes, so the counter's high word is 0).
void compress(std::uint64_t h[8], const std::uint8_t block[kBlock], std::uint64_t bytes,
              bool last) {
    std::uint64_t m[16];
    for (int i = 0; i < 16; ++i) {
        m[i] = load_le64(block + 8 * i);
    }
    std::uint64_t v[16];
    for (int i = 0; i < 8; ++i) {
        v[i] = h[i];
        v[i + 8] = kIv[i];
    }
    v[12] ^= bytes;
    if (last) {
        v[14] = ~v[14];
    }
    for (int round = 0; round < 12; ++round) {
        const std::uint8_t* s = kSigma[round % 10];
        mix(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
        mix(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
        mix(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
        mix(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
        mix(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
        mix(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
        mix(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
        mix(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
    }
    for (int i = 0; i < 8; ++i) {
        h[i] ^= v[i] ^ v[i + 8];
    }
}

}  // namespace

std::vector<std::uint8_t> blake2b(std::span<const std::uint8_t> data, std::size_t out_len) {
    if (out_len == 0 || out_len > 64) {
        return {};
    }
    std::uint64_t h[8];
    std::memcpy(h, kIv, sizeof h);
    h[0] ^= 0x01010000ull ^ out_len;  // parameter block: no key, fanout 1, depth 1
    std::size_t done = 0;
    // Every full block but the last is compressed as it comes; the last block
    // (full or padded with zeros, or empty for an empty input) is final.
    while (data.size() - done > kBlock) {
        compress(h, data.data() + done, done + kBlock, false);
        done += kBlock;
    }
    std::uint8_t last[kBlock] = {};
    if (data.size() > done) {
        std::memcpy(last, data.data() + done, data.size() - done);
    }
    compress(h, last, data.size(), true);
    std::vector<std::uint8_t> out(out_len);
    for (std::size_t i = 0; i < out_len; ++i) {
        out[i] = static_cast<std::uint8_t>(h[i / 8] >> (8 * (i % 8)));
    }
    return out;
}

}  // namespace kcache::sign::detail
