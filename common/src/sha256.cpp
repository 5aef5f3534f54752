// SHA-256 through OpenSSL's SHA256_Init/Update/Final, not EVP: in OpenSSL 3 the
// first EVP digest of a process initialises the provider machinery, 1.4-2.7 ms
// measured here, and a process's first cache lookup hashes a source. These
// run the same (SHA-NI) code without it: 33-38 us on the first call, then
// 2.5 us for 4 KiB. It is deprecated API in 3.0, hence the compatibility level.
#define OPENSSL_API_COMPAT 0x10100000L
#include <openssl/sha.h>

#include <cerrno>
#include <new>
#include <vector>

#include "kcache/common/hex.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/common/sha256.hpp"

namespace kcache {
namespace {

static_assert(sizeof(SHA256_CTX) <= 128 && alignof(SHA256_CTX) <= 8);
static_assert(SHA256_DIGEST_LENGTH == 32);

SHA256_CTX* ctx_of(unsigned char* storage) {
    return std::launder(reinterpret_cast<SHA256_CTX*>(storage));
}

}  // namespace

Sha256::Sha256() {
    SHA256_Init(new (ctx_) SHA256_CTX);
}

void Sha256::update(const void* data, std::size_t n) {
    SHA256_Update(ctx_of(ctx_), data, n);
}

Sha256Digest Sha256::finish() {
    Sha256Digest out{};
    SHA256_Final(out.data(), ctx_of(ctx_));
    return out;
}

Sha256Digest sha256(std::string_view data) {
    Sha256 h;
    h.update(data);
    return h.finish();
}

std::string sha256_hex(std::string_view data) {
    return to_hex(sha256(data));
}

std::optional<std::string> sha256_file_hex(const std::filesystem::path& path) {
    auto fd = open_regular_file(path);  // a FIFO or device is refused, never waited on
    if (!fd) {
        return std::nullopt;
    }
    Sha256 h;
    std::vector<char> buf(1 << 20);
    for (;;) {
        const ssize_t n = ::read(fd->get(), buf.data(), buf.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return std::nullopt;
        }
        if (n == 0) {
            return to_hex(h.finish());
        }
        h.update(buf.data(), static_cast<std::size_t>(n));
    }
}

}  // namespace kcache
