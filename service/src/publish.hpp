#pragma once
// Publish: the one place where bytes a rung produced go anywhere (the user
// store, the bytes kept resident, the remote tier), and the home of every
// other write the service makes to the user store. A write that fails is
// counted (CacheStats::store_write_failures) and, when a request is there to
// hear it, named in its misses (MissCause::not_stored); none is dropped.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "contexts/resident_bytes.hpp"
#include "counters.hpp"
#include "kcache/common/workers.hpp"
#include "kcache/remote/remote.hpp"
#include "kcache/service/service_api.hpp"
#include "plan.hpp"
#include "stored_tiers.hpp"

namespace kcache::service {

class Publisher {
  public:
    // Every part must outlive this object; `remote` may be null (none configured).
    Publisher(StoredTiers& stored, ResidentBytes& resident, remote::Client* remote,
              Workers& workers, Counters& counters)
        : stored_(stored),
          resident_(resident),
          remote_(remote),
          workers_(workers),
          counters_(counters) {}

    enum class Share { now, later };  // later: the JIT warm-up's hook shares
    // After `produced` answered `plan` with `bytes`: a remote hit is stored
    // by a worker, AOT and JIT bytes are stored and shared with the remote
    // tier (`share`), and the bytes are kept resident. A failed write is
    // counted and added to `misses` (null: logged).
    void publish(const Plan& plan, store::Bytes bytes, const store::Provenance& provenance,
                 Rung produced, Share share, std::vector<RungMiss>* misses);
    // Replaces the stored binary of `plan` (and the one kept resident) by
    // the build the helper warmed up after answering, and shares it.
    void publish_warmed(const Plan& plan, std::span<const std::uint8_t> bytes,
                        const store::Provenance& provenance);
    // Queues `bytes` for upload when a writable remote is configured.
    void share(const store::KeyFields& fields, std::span<const std::uint8_t> bytes,
               const store::Provenance& provenance);

    // The user store's other writes; each does nothing without a writable
    // user store, and a failure is counted and told as in publish().
    void record_failure(const Plan& plan, store::FailureKind kind, const std::string& detail,
                        std::int64_t budget_ms, std::vector<RungMiss>* misses);
    void remove(const Plan& plan, std::vector<RungMiss>* misses);

  private:
    bool store_put(const store::KeyFields& fields, std::span<const std::uint8_t> bytes,
                   const store::Provenance& provenance, store::PutMode mode,
                   std::vector<RungMiss>* misses);
    void write_failed(const std::string& what, const std::string& why,
                      std::vector<RungMiss>* misses);
    void backfill(const store::KeyFields& fields, std::shared_ptr<const store::Bytes> bytes,
                  const store::Provenance& provenance);
    void keep_resident(const Plan& plan, std::shared_ptr<const store::Bytes> bytes, Rung produced);

    StoredTiers& stored_;
    ResidentBytes& resident_;
    remote::Client* const remote_;
    Workers& workers_;
    Counters& counters_;
};

}  // namespace kcache::service
