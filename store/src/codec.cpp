#include "kcache/store/codec.hpp"

#include <xxhash.h>
// ZSTD_c_literalCompressionMode is in zstd's experimental section (since
// v1.5.0); ZSTD_CCtx_setParameter itself is stable and exported.
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "thread_slots.hpp"

namespace kcache::store {
namespace {

struct CCtxDeleter {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct DCtxDeleter {
    void operator()(ZSTD_DCtx* c) const { ZSTD_freeDCtx(c); }
};
using OwnCCtx = std::unique_ptr<ZSTD_CCtx, CCtxDeleter>;
using OwnDCtx = std::unique_ptr<ZSTD_DCtx, DCtxDeleter>;

// One context per thread, reused: creating one costs more than a small
// frame. Once the thread's are freed (thread_slots.hpp), `own` holds one
// for the call.
thread_local ZSTD_CCtx* t_cctx = nullptr;
thread_local ZSTD_DCtx* t_dctx = nullptr;
void free_contexts() {
    ZSTD_freeCCtx(std::exchange(t_cctx, nullptr));
    ZSTD_freeDCtx(std::exchange(t_dctx, nullptr));
}
ZSTD_CCtx* compress_context(OwnCCtx& own) {
    if (!thread_slots_open<free_contexts>()) {
        own.reset(ZSTD_createCCtx());
        return own.get();
    }
    return t_cctx != nullptr ? t_cctx : (t_cctx = ZSTD_createCCtx());
}
ZSTD_DCtx* decompress_context(OwnDCtx& own) {
    if (!thread_slots_open<free_contexts>()) {
        own.reset(ZSTD_createDCtx());
        return own.get();
    }
    return t_dctx != nullptr ? t_dctx : (t_dctx = ZSTD_createDCtx());
}

// A zstd block regenerates at most 128 KiB from at least 4 bytes (an RLE
// block: 3-byte header, 1 byte), so no frame expands more than this.
constexpr std::uint64_t kMaxZstdExpansion = 32 * 1024;

// A stored entry that fails one of decode_verified's checks.
Unexpected<StoreError> corrupt(std::string message) {
    return fail(StoreError{StoreErrc::corrupt, std::move(message)});
}

}  // namespace

Checksum checksum_of(std::span<const std::uint8_t> raw) {
    XXH128_canonical_t canon;
    XXH128_canonicalFromHash(&canon, XXH3_128bits(raw.data(), raw.size()));
    Checksum out{};
    std::copy(std::begin(canon.digest), std::end(canon.digest), out.begin());
    return out;
}

Encoded encode(std::span<const std::uint8_t> raw, int level, bool compress_literals) {
    Encoded out;
    OwnCCtx own;
    ZSTD_CCtx* ctx = compress_context(own);
    // Every parameter is set on each call: the context is reused across calls.
    const bool configured =
        ctx != nullptr && !ZSTD_isError(ZSTD_CCtx_reset(ctx, ZSTD_reset_session_and_parameters)) &&
        !ZSTD_isError(ZSTD_CCtx_setParameter(ctx, ZSTD_c_compressionLevel, level));
    // A libzstd that does not know the (experimental) parameter refuses it and
    // codes the literals: a smaller frame, decoded a little slower.
    if (configured) {
        (void)ZSTD_CCtx_setParameter(ctx, ZSTD_c_literalCompressionMode,
                                     compress_literals ? ZSTD_ps_enable : ZSTD_ps_disable);
    }
    if (configured && !raw.empty()) {
        out.data.resize(ZSTD_compressBound(raw.size()));
        std::size_t n =
            ZSTD_compress2(ctx, out.data.data(), out.data.size(), raw.data(), raw.size());
        if (!ZSTD_isError(n) && n < raw.size()) {
            out.data.resize(n);
            out.data.shrink_to_fit();
            out.codec = Codec::zstd;
            return out;
        }
    }
    out.data.assign(raw.begin(), raw.end());
    out.codec = Codec::none;
    return out;
}

Result<Bytes, StoreError> decode_verified(Codec codec, std::span<const std::uint8_t> stored,
                                          std::uint64_t raw_size,
                                          std::span<const std::uint8_t> checksum) {
    if (checksum.size() != Checksum{}.size()) {
        return corrupt(std::string("checksum column has ") + std::to_string(checksum.size()) +
                       " bytes, expected 16");
    }
    if (raw_size > kMaxRawSize) {
        return corrupt("raw size " + std::to_string(raw_size) + " exceeds the limit of " +
                       std::to_string(kMaxRawSize));
    }
    Bytes raw;
    if (codec == Codec::none) {
        if (stored.size() != raw_size) {
            return corrupt("stored size " + std::to_string(stored.size()) + " != raw size " +
                           std::to_string(raw_size));
        }
        raw.assign(stored.begin(), stored.end());
    } else if (codec == Codec::zstd) {
        unsigned long long declared = ZSTD_getFrameContentSize(stored.data(), stored.size());
        if (declared != raw_size) {
            return corrupt("zstd frame header does not declare " + std::to_string(raw_size) +
                           " bytes");
        }
        // Checked before allocating: a hostile row may declare any size.
        if (raw_size / kMaxZstdExpansion > stored.size()) {
            return corrupt("a zstd frame of " + std::to_string(stored.size()) +
                           " bytes cannot hold " + std::to_string(raw_size));
        }
        raw.resize(raw_size);
        OwnDCtx own;
        std::size_t n = ZSTD_decompressDCtx(decompress_context(own), raw.data(), raw.size(),
                                            stored.data(), stored.size());
        if (ZSTD_isError(n) || n != raw_size) {
            return corrupt(std::string("bad zstd frame: ") +
                           (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch"));
        }
    } else {
        return corrupt("unknown codec " + std::to_string(static_cast<int>(codec)));
    }
    Checksum actual = checksum_of(raw);
    if (!std::equal(actual.begin(), actual.end(), checksum.begin())) {
        return corrupt(std::string("XXH3-128 checksum mismatch"));
    }
    return raw;
}

}  // namespace kcache::store
