// Publish (publish.hpp): where the bytes a rung produced go, and every
// write of the service to the user store.

#include "publish.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <thread>

#include "binary_vouch.hpp"
#include "kcache/common/log.hpp"
#include "kcache/observe/trace.hpp"

namespace kcache::service {
namespace {

// A backfill's nice value: about a tenth of a busy core's time while a
// request runs beside it, all of an idle one.
constexpr int kBackfillNice = 10;

}  // namespace

void Publisher::publish(const Plan& plan, store::Bytes bytes, const store::Provenance& provenance,
                        Rung produced, Share share_now, std::vector<RungMiss>* misses) {
    trace::Span span("publish", "publish");  // of the traced request (trace.hpp)
    // One copy of the bytes in memory, shared by the rung of resident bytes
    // and a backfill's worker (a copy of a 100 KB binary into fresh memory
    // was most of a remote hit's publish).
    auto shared = std::make_shared<const store::Bytes>(std::move(bytes));
    switch (produced) {
        case Rung::remote:
            backfill(plan.fields, shared, provenance);
            break;
        case Rung::aot:
        case Rung::jit:
            store_put(plan.fields, *shared, provenance, store::PutMode::keep_existing, misses);
            if (share_now == Share::now && stored_.writable_user() != nullptr) {
                share(plan.fields, *shared, provenance);
            }
            break;
        default:  // found in the user store or a pack: already where it lives
            break;
    }
    keep_resident(plan, std::move(shared), produced);
}

void Publisher::publish_warmed(const Plan& plan, std::span<const std::uint8_t> bytes,
                               const store::Provenance& provenance) {
    if (stored_.writable_user() == nullptr) {
        return;  // nothing was stored to replace
    }
    share(plan.fields, bytes, provenance);
    if (!store_put(plan.fields, bytes, provenance, store::PutMode::replace, nullptr)) {
        return;  // counted and logged (no request waits for it)
    }
    counters_.bump(Counter::warmed_later);
    keep_resident(plan, std::make_shared<const store::Bytes>(bytes.begin(), bytes.end()),
                  Rung::jit);
}

void Publisher::share(const store::KeyFields& fields, std::span<const std::uint8_t> bytes,
                      const store::Provenance& provenance) {
    if (remote_ != nullptr) {
        remote_->enqueue(fields, bytes, provenance);
    }
}

void Publisher::record_failure(const Plan& plan, store::FailureKind kind, const std::string& detail,
                               std::int64_t budget_ms, std::vector<RungMiss>* misses) {
    if (store::Store* user = stored_.writable_user()) {
        if (auto r = user->record_failure(plan.key, kind, detail, budget_ms); !r) {
            write_failed("failure record not written", r.error().message, misses);
        }
    }
}

void Publisher::remove(const Plan& plan, std::vector<RungMiss>* misses) {
    if (store::Store* user = stored_.writable_user()) {
        if (auto r = user->remove(plan.key); !r) {
            write_failed("rejected entry not removed", r.error().message, misses);
        }
    }
}

bool Publisher::store_put(const store::KeyFields& fields, std::span<const std::uint8_t> bytes,
                          const store::Provenance& provenance, store::PutMode mode,
                          std::vector<RungMiss>* misses) {
    store::Store* user = stored_.writable_user();
    if (user == nullptr) {
        return false;
    }
    // Recorded first, so that no process finds the entry without the record
    // (a put that fails leaves a record of no entry, which gc drops).
    record_stored_here(stored_.vouched_dir(), store::make_key(fields));
    auto put = user->put(fields, bytes, provenance, mode);
    if (!put) {
        write_failed("not stored in the user store", put.error().message, misses);
    }
    return put.ok();
}

void Publisher::write_failed(const std::string& what, const std::string& why,
                             std::vector<RungMiss>* misses) {
    counters_.bump(Counter::store_write_failures);
    if (misses != nullptr) {
        misses->emplace_back(Rung::user_store, MissCause::not_stored, what + ": " + why);
    } else {
        logging::warning(what + ": " + why);  // no request to tell: the log sink hears it
    }
}

// A remote hit is stored off the caller's path (compressing and committing
// cost about as much as the download), in a worker that the cache joins
// when it closes, so the next process of the node finds it. The worker
// yields to the request (a nice value of its own): a new thread runs
// first, and on a busy machine it took the caller's core for the whole
// put (1 to 6 ms) before the hit returned.
void Publisher::backfill(const store::KeyFields& fields, std::shared_ptr<const store::Bytes> bytes,
                         const store::Provenance& provenance) {
    if (stored_.writable_user() == nullptr) {
        return;
    }
    // The key's fields, not the plan: the plan holds the request's source.
    std::function<void()> put = [this, fields, b = std::move(bytes), p = provenance,
                                 caller = std::this_thread::get_id()] {
        if (std::this_thread::get_id() != caller) {
            // Linux keeps a nice value per thread: this one only. Best effort.
            (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kBackfillNice);
        }
        store_put(fields, *b, p, store::PutMode::keep_existing, nullptr);
    };
    if (!workers_.start(put)) {
        put();  // the cache is closing (or no thread): stored now
    }
}

// Kept when the plan may use stored binaries, under the rung a later
// process would find them in (JIT results and promoted AOT binaries are in
// a writable user store).
void Publisher::keep_resident(const Plan& plan, std::shared_ptr<const store::Bytes> bytes,
                              Rung produced) {
    if (!plan.use_stored || plan.verified_only) {
        return;
    }
    const bool persisted =
        stored_.writable_user() != nullptr && (produced == Rung::jit || produced == Rung::aot);
    resident_.put(plan.key, std::move(bytes), persisted ? Rung::user_store : produced);
}

}  // namespace kcache::service
