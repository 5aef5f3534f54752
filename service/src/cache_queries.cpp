// The Cache facade's queries: binary bytes, counters, forgetting a context,
// learning a device ahead of its requests, draining background work.

#include "cache_impl.hpp"
#include "kcache/common/deadline.hpp"
#include "kcache/config/remote_tier.hpp"
#include "kcache/observe/metrics.hpp"

namespace kcache {

namespace {

// The bytes of a program program() answered (or its failure), through `loader`.
Binary binary_of(service::Loader& loader, Program p) {
    Binary b;
    b.outcome = p.outcome();
    if (!p.ok()) {
        return b;
    }
    auto bytes = loader.binary_of(p.get());
    if (!bytes) {
        b.outcome.status = StatusCode::device_error;
        b.outcome.message = bytes.error().message;
        return b;
    }
    b.bytes.assign(bytes->begin(), bytes->end());
    return b;
}

}  // namespace

Binary Cache::binary(cl_context context, cl_device_id device,
                     const KernelRequest& request) noexcept {
    Binary b;
    try {
        Program p = program(context, device, request);
        Impl* impl = live();  // after program(), which makes it in a forked child
        if (impl == nullptr) {
            b.outcome = p.outcome();
            return b;
        }
        b = binary_of(*impl->loader, std::move(p));
    } catch (const std::exception& e) {
        b.bytes.clear();
        b.outcome = Outcome{};
        b.outcome.status = StatusCode::internal_error;
        b.outcome.message = e.what();
    }
    return b;
}

CacheStats Cache::stats() noexcept {
    CacheStats s;
    Impl* impl = live();
    if (impl == nullptr) {
        return s;
    }
    const service::Counters& c = impl->counters;
#define KCACHE_COUNTER(field, frozen, source, doc) s.field = c[service::Counter::field];
#include "kcache/kcache_counters.def"
#undef KCACHE_COUNTER
    s.programs_released = impl->programs.released();
    metrics::snapshot(s);
    if (impl->remote) {
        const remote::Counters r = impl->remote->counters();
#define KCACHE_REMOTE_COUNTER(field, doc) s.remote_##field = r.field;
#include "kcache/remote/counters.def"
#undef KCACHE_REMOTE_COUNTER
    }
    try {
        if (auto* user = impl->stored.user()) {
            if (auto st = user->stats(); st) {
                s.entries = st->entries;
                s.raw_bytes = st->raw_bytes;
                s.stored_bytes = st->stored_bytes;
                s.evictions = st->evictions;
                s.corruptions = st->corruptions;
            }
        }
    } catch (...) {
        // The store's sizes stay zero; the process counters above are exact.
    }
    return s;
}

std::size_t Cache::forget(cl_context context) noexcept {
    Impl* impl = live();
    return impl != nullptr ? impl->programs.forget(context) : 0;
}

Outcome Cache::prepare(cl_device_id device) noexcept {
    Outcome out;
    out.status = StatusCode::ok;
    Impl* impl = device != nullptr ? live() : nullptr;
    if (device == nullptr) {
        out.status = StatusCode::invalid_argument;
        out.message = "null cl_device_id";
    } else if (impl == nullptr || impl->config.disabled) {
        out.status = StatusCode::disabled;
        out.message = impl == nullptr ? "this forked process could not open its cache"
                                      : "kcache is disabled (KCACHE_DISABLE)";
    } else {
        try {
            if (auto facts = impl->identities.facts_of(device, *impl->db); !facts) {
                out.status = StatusCode::device_error;
                out.message = facts.error();
            }
        } catch (const std::exception& e) {
            out.status = StatusCode::internal_error;
            out.message = e.what();
        }
    }
    return out;
}

std::vector<remote::UploadNote> Cache::upload_notes() const {
    Impl* impl = const_cast<Cache*>(this)->live();
    return impl != nullptr && impl->remote ? impl->remote->upload_notes()
                                           : std::vector<remote::UploadNote>{};
}

void Cache::drain(std::chrono::milliseconds limit) noexcept {
    const auto until = deadline_after(limit);
    Impl* impl = live();
    if (impl == nullptr) {
        return;
    }
    try {
        for (auto& f : impl->flight.running()) {
            f.wait_until(until);
        }
    } catch (...) {
        // Only the vector's allocation can throw: then nothing is waited for.
    }
    impl->flight.drain(until);  // warm-ups after an answer store and share what they built
    if (impl->remote) {
        const auto left = until - std::chrono::steady_clock::now();
        impl->remote->flush(std::max(std::chrono::milliseconds(0),
                                     std::chrono::duration_cast<std::chrono::milliseconds>(left)));
    }
}

}  // namespace kcache
