// Publish: the one place where bytes a rung produced go anywhere (the user
// store, the bytes kept resident, the remote tier), and the home of every
// other write the service makes to the user store. A write that fails is
// counted (CacheStats::store_write_failures) and, when a request is there to
// hear it, named in its misses (MissCause::not_stored); none is dropped.

#include "cache_impl.hpp"
#include "kcache/common/log.hpp"

namespace kcache {
namespace {

// The rung to report for bytes kept in memory: where a later process would
// find them (JIT results and promoted AOT binaries are in a writable user store).
Rung persisted_rung(store::TieredStore& tiers, Rung produced) {
    const store::Store* user = tiers.user();
    const bool writable = user != nullptr && user->mode() == store::OpenMode::read_write;
    return writable && (produced == Rung::jit || produced == Rung::aot) ? Rung::user_store
                                                                        : produced;
}

}  // namespace

void Cache::Impl::write_failed(const std::string& what, const std::string& why,
                               std::vector<RungMiss>* misses) {
    counters.store_write_failures++;
    if (misses != nullptr) {
        misses->emplace_back(Rung::user_store, MissCause::not_stored, what + ": " + why);
    } else {
        logging::warning(what + ": " + why);  // no request to tell: the log sink hears it
    }
}

bool Cache::Impl::store_put(const Plan& plan, std::span<const std::uint8_t> bytes,
                            const store::Provenance& provenance, store::PutMode mode,
                            std::vector<RungMiss>* misses) {
    store::Store* user = writable_user_store();
    if (user == nullptr) {
        return false;
    }
    auto put = user->put(plan.fields, bytes, provenance, mode);
    if (!put) {
        write_failed("not stored in the user store", put.error().message, misses);
    }
    return put.ok();
}

void Cache::Impl::store_failure(const Plan& plan, store::FailureKind kind,
                                const std::string& detail, std::int64_t budget_ms,
                                std::vector<RungMiss>* misses) {
    if (store::Store* user = writable_user_store()) {
        if (auto r = user->record_failure(plan.key, kind, detail, budget_ms); !r) {
            write_failed("failure record not written", r.error().message, misses);
        }
    }
}

void Cache::Impl::store_remove(const Plan& plan, std::vector<RungMiss>* misses) {
    if (store::Store* user = writable_user_store()) {
        if (auto r = user->remove(plan.key); !r) {
            write_failed("rejected entry not removed", r.error().message, misses);
        }
    }
}

void Cache::Impl::keep_resident(const Plan& plan, store::Bytes bytes, Rung produced) {
    if (plan.use_stored && !plan.verified_only) {
        resident.put(plan.key, std::move(bytes), persisted_rung(tiers, produced));
    }
}

void Cache::Impl::share(const store::KeyFields& fields, std::span<const std::uint8_t> bytes,
                        const store::Provenance& provenance) {
    if (remote) {
        remote->enqueue(fields, bytes, provenance);
    }
}

// A remote hit is stored off the caller's path (compressing and committing
// cost about as much as the download), in a worker that the cache joins with
// its compiles when it closes, so the next process of the node finds it.
void Cache::Impl::backfill(const Plan& plan, store::Bytes bytes, store::Provenance provenance) {
    if (writable_user_store() == nullptr) {
        return;
    }
    std::lock_guard g(mu);
    if (closing) {
        store_put(plan, bytes, provenance, store::PutMode::keep_existing, nullptr);
        return;
    }
    std::erase_if(workers, [](Worker& w) {  // join finished ones
        if (w.done.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
            return false;
        }
        w.thread.join();
        return true;
    });
    auto done = std::make_shared<std::promise<Compiled>>();
    workers.push_back(
        Worker{std::thread([this, plan, b = std::move(bytes), p = std::move(provenance), done] {
                   store_put(plan, b, p, store::PutMode::keep_existing, nullptr);
                   done->set_value(Compiled{});
               }),
               done->get_future().share()});
}

void Cache::Impl::publish(const Plan& plan, store::Bytes bytes, const store::Provenance& provenance,
                          Rung produced, Share share_now, std::vector<RungMiss>* misses) {
    switch (produced) {
        case Rung::remote:
            backfill(plan, bytes, provenance);
            break;
        case Rung::aot:
        case Rung::jit:
            store_put(plan, bytes, provenance, store::PutMode::keep_existing, misses);
            if (share_now == Share::now && writable_user_store() != nullptr) {
                share(plan.fields, bytes, provenance);
            }
            break;
        default:  // found in the user store or a pack: already where it lives
            break;
    }
    keep_resident(plan, std::move(bytes), produced);
}

}  // namespace kcache
