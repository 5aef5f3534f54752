#pragma once
// The warm command's builder: answers each item from the user store's exact
// key when it can, else through the cache service, and tells whether the
// store really kept what it counted. Internal to the CLI.

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kcache/device_db/database.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/service/service_api.hpp"
#include "kcache/store/store.hpp"
#include "manifest.hpp"
#include "opencl_devices.hpp"

namespace kcache::cli {

// `not_stored`: compiled, but the store did not keep it (disk full, size
// bound): the next run compiles again, so it needs action like a failure.
enum class WarmResult { built, cached, unsupported, failed, timed_out, not_stored };
constexpr const char* kResultNames[] = {"built",  "already cached", "unsupported",
                                        "failed", "timed out",      "not stored"};
constexpr const char* kJsonNames[] = {"built",  "already_cached", "unsupported",
                                      "failed", "timed_out",      "not_stored"};

// One build: a registry variant or a manifest item, on one device.
struct WarmItem {
    std::size_t device = 0;
    std::optional<kernels::Variant> variant;
    std::optional<ManifestItem> manifest;
    std::string label() const { return variant ? variant->id() : manifest->name; }
};

struct ItemReport {
    WarmResult result = WarmResult::failed;
    std::string rung;
    std::string message;
    std::optional<store::KeyFields> kept;  // its entry in the user store, when counted there
};

WarmResult classify(const Outcome& o);

// What warm's uploads came to: counts, and each kind of skip or failure once.
struct UploadReport {
    std::uint64_t uploaded = 0, failed = 0;
    std::vector<remote::UploadNote> notes;
};

// Answers each item: an exact-key check of the user store first (with the
// service's own key function, so a hit builds no program), then the cache
// service for misses. The service is opened at the first miss, so a warm
// that finds everything costs little more than starting OpenCL.
class Warmer {
  public:
    Warmer(Config config, store::Store store, device_db::DeviceDb db)
        : config_(std::move(config)), store_(std::move(store)), db_(std::move(db)) {}

    ItemReport build(const OpenedDevice& dev, const WarmItem& item,
                     std::chrono::milliseconds timeout);

    // After the batch: an entry counted built or already cached that the
    // store no longer holds was evicted by this run's later puts.
    void recheck(std::vector<ItemReport>& reports);

    // Waits (at most `limit`) for the uploads the service queued for what it
    // built; returns their counts and why any was not sent or failed, or
    // nullopt when nothing could upload (no remote, or a read-only one).
    std::optional<UploadReport> flush_uploads(std::chrono::milliseconds limit);

  private:
    // True when the user store holds the exact key the runtime would look up
    // and its bytes pass the checksum: a damaged entry is not "cached", the
    // service's own read quarantines it and the build replaces it.
    bool stored(const store::KeyFields& fields) { return store_.get(fields).ok(); }
    Program request(Cache& cache, const OpenedDevice& dev, const WarmItem& item,
                    std::chrono::milliseconds timeout);
    // Runs `item`'s own known-answer test on its stored binary (`fields`):
    // one that fails, or cannot run, makes `report` a failure saying why.
    void caller_kat(const OpenedDevice& dev, const ManifestItem& item,
                    const store::KeyFields& fields, std::chrono::milliseconds timeout,
                    ItemReport& report);
    Cache* open_cache();

    Config config_;
    store::Store store_;
    device_db::DeviceDb db_;
    std::mutex mutex_;
    std::unique_ptr<Cache> cache_;
    std::string open_error_;
};

}  // namespace kcache::cli
