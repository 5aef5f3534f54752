// The process's metrics registry (metrics.hpp): cells per thread, summed by
// snapshots. A thread's cells are written by that thread only, so an
// observation is a relaxed load and store per cell (no locked instruction,
// no cache line shared with another writer); readers load them relaxed. A
// thread that ends adds its cells to the retired totals and unlinks them,
// both under the registry's lock, so a snapshot counts each observation once.

#include "kcache/observe/metrics.hpp"
#include "kcache/common/hot_path.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace kcache::metrics {
namespace {

// Cell layout: the histograms' sums (ns) first, the timers' and then those
// by rung, in two cache lines; then each histogram's buckets; then the
// request counts [rung][status]. A hit observes a load and its request: both
// sums land in the first line, so a request after a context creation, which
// finds these cells cold, misses on three lines instead of four. The
// histogram of every request is not kept: it is the sum of those by rung
// (each request is in exactly one).
constexpr std::size_t kTimerHist = 0;
constexpr std::size_t kAnsweredHist = kTimerHist + 4;  // + rung
constexpr std::size_t kHistograms = kAnsweredHist + kRungCount;
constexpr std::size_t kSumCells = (kHistograms + 7) / 8 * 8;  // whole lines
constexpr std::size_t kRequestCells = kSumCells + kHistograms * kLatencyBuckets;
// Requests that did not end ok, [rung][status]; the last column counts the
// statuses CacheStats::requests has no column for. Those that ended ok are
// the rest of the rung's histogram: the common case adds no cell of its own.
constexpr std::size_t kStatusCols = kStatusCount + 1;
constexpr std::size_t kCells = kRequestCells + kRungCount * kStatusCols;

// One page: a request after a context creation, when the page's
// translation is cold too, pays for one walk of the page tables, not two.
struct alignas(4096) Cells {
    std::array<std::atomic<std::uint64_t>, kCells> v{};

    // Only the owning thread adds: a plain read-modify-write is exact.
    void add(std::size_t i, std::uint64_t n) noexcept {
        v[i].store(v[i].load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
    }
};

static_assert(sizeof(Cells) == 4096, "a thread's cells fill one page");

struct Registry {
    std::mutex mu;
    std::vector<Cells*> live;
    std::array<std::uint64_t, kCells> retired{};
};

// Never destroyed: threads may end (and retire their cells) during exit.
Registry& registry() {
    static Registry* r = new Registry;
    return *r;
}

// This thread's cells: a plain pointer, so that the hot path is one TLS
// load (initial-exec: no call into the dynamic linker), set by the slow path
// below at the thread's first observation.
thread_local Cells* t_cells __attribute__((tls_model("initial-exec"))) = nullptr;

// Owns a thread's cells; its destructor (at thread exit) retires them.
struct ThreadCells {
    std::unique_ptr<Cells> cells = std::make_unique<Cells>();
    ThreadCells() {
        Registry& r = registry();
        std::lock_guard g(r.mu);
        r.live.push_back(cells.get());
    }
    ~ThreadCells() {
        t_cells = nullptr;
        Registry& r = registry();
        std::lock_guard g(r.mu);
        for (std::size_t i = 0; i < kCells; ++i) {
            r.retired[i] += cells->v[i].load(std::memory_order_relaxed);
        }
        std::erase(r.live, cells.get());
    }
};

[[gnu::noinline]] Cells& first_cells() {
    thread_local ThreadCells owner;
    t_cells = owner.cells.get();
    return *t_cells;
}

Cells& mine() {
    Cells* c = t_cells;
    return c != nullptr ? *c : first_cells();
}

[[gnu::always_inline]] inline void add_duration(Cells& c, std::size_t hist,
                                                std::chrono::nanoseconds d) noexcept {
    c.add(kSumCells + hist * kLatencyBuckets + bucket_of(d), 1);
    c.add(hist, static_cast<std::uint64_t>(std::max<std::int64_t>(0, d.count())));
}

void read_histogram(const std::array<std::uint64_t, kCells>& cells, std::size_t hist,
                    LatencyHistogram& h) {
    const std::size_t base = kSumCells + hist * kLatencyBuckets;
    h = LatencyHistogram{};
    for (std::size_t b = 0; b < kLatencyBuckets; ++b) {
        h.buckets[b] = cells[base + b];
        h.count += cells[base + b];  // the count is the buckets' sum, always consistent
    }
    h.sum_ns = cells[hist];
}

}  // namespace

std::size_t bucket_of(std::chrono::nanoseconds duration) noexcept {
    const auto ns = static_cast<std::uint64_t>(std::max<std::int64_t>(0, duration.count()));
    // The first bound at or above `ns` (a binary search: five steps whatever
    // the duration, where a scan from the bottom took twelve for a driver
    // load of half a millisecond, each a branch the CPU could mispredict).
    return static_cast<std::size_t>(
        std::lower_bound(kLatencyBoundsNs.begin(), kLatencyBoundsNs.end(), ns) -
        kLatencyBoundsNs.begin());
}

KCACHE_HOT_PATH void observe_request(Rung rung, StatusCode status,
                                     std::chrono::nanoseconds total) noexcept {
    try {
        Cells& c = mine();
        const auto r = std::min<std::size_t>(static_cast<std::size_t>(rung), kRungCount - 1);
        add_duration(c, kAnsweredHist + r, total);
        if (status != StatusCode::ok) {
            const auto s = std::min<std::size_t>(static_cast<std::size_t>(status), kStatusCount);
            c.add(kRequestCells + r * kStatusCols + s, 1);
        }
    } catch (...) {
        // Only the thread's first observation allocates; without memory it is lost.
    }
}

KCACHE_HOT_PATH void observe(Timer timer, std::chrono::nanoseconds duration) noexcept {
    try {
        add_duration(mine(), kTimerHist + static_cast<std::size_t>(timer), duration);
    } catch (...) {
        // As above.
    }
}

void snapshot(CacheStats& out) noexcept {
    std::array<std::uint64_t, kCells> sum{};
    {
        Registry& r = registry();
        std::lock_guard g(r.mu);
        sum = r.retired;
        for (const Cells* c : r.live) {
            for (std::size_t i = 0; i < kCells; ++i) {
                sum[i] += c->v[i].load(std::memory_order_relaxed);
            }
        }
    }
    out.request = LatencyHistogram{};
    for (std::size_t r = 0; r < kRungCount; ++r) {
        read_histogram(sum, kAnsweredHist + r, out.answered[r]);
        out.request.count += out.answered[r].count;
        out.request.sum_ns += out.answered[r].sum_ns;
        for (std::size_t b = 0; b < kLatencyBuckets; ++b) {
            out.request.buckets[b] += out.answered[r].buckets[b];
        }
        std::uint64_t not_ok = 0;
        for (std::size_t s = 1; s < kStatusCols; ++s) {
            const std::uint64_t n = sum[kRequestCells + r * kStatusCols + s];
            not_ok += n;
            if (s < kStatusCount) {
                out.requests[r][s] = n;
            }
        }
        // A thread may be between its two adds: never below zero.
        out.requests[r][0] = out.answered[r].count - std::min(not_ok, out.answered[r].count);
    }
    LatencyHistogram* timers[] = {&out.compile, &out.load, &out.remote_get, &out.remote_put};
    for (std::size_t t = 0; t < std::size(timers); ++t) {
        read_histogram(sum, kTimerHist + t, *timers[t]);
    }
}

}  // namespace kcache::metrics
