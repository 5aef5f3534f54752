#pragma once
// Cache::Impl: the state behind the public facade and the ladder's steps.
// Split over ladder.cpp (docs/design.md, "The lookup ladder") and flight.cpp
// (single-flight JIT under the watchdog).

#include <sys/types.h>

#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "cl_util.hpp"
#include "kcache/cache/keys.hpp"
#include "kcache/cache/loader.hpp"
#include "kcache/cache/pack_trust.hpp"
#include "kcache/compiler/jit.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/kcache.hpp"
#include "kcache/remote/remote.hpp"
#include "kcache/store/pack.hpp"
#include "program_cache.hpp"
#include "resident_bytes.hpp"

namespace kcache {

using SteadyClock = std::chrono::steady_clock;

// A memoized plan's place: the root device and the request's signature.
using PlanKey = service::HandlesAndText<cl_device_id>;
using PlanView = service::HandlesAndTextView<cl_device_id>;

// One request after resolution: what to compile, for which device, by when.
struct Plan {
    service::CompileInput input;
    store::KeyFields fields;
    store::Key key;
    std::optional<std::string> aot_target;
    cl_platform_id platform = nullptr;  // the device's
    std::size_t warmup_local_size = 0;
    SteadyClock::time_point deadline;
    std::chrono::milliseconds budget{0};                  // what `deadline` was made from
    std::optional<std::chrono::milliseconds> budget_cap;  // quirk jit_timeout_ms
    Mode mode = Mode::blocking;
    bool use_stored = true;                   // quirk no_cached_binaries turns this off
    bool verified_only = false;               // quirk verify_before_use: only Passed entries
    std::optional<std::string> remote_error;  // KCACHE_REMOTE_REQUIRED and the remote failed
};

// What a (shared) compile produced.
struct Compiled {
    StatusCode status = StatusCode::internal_error;
    Rung rung = Rung::jit;  // jit, or user_store when another process built it first
    store::Bytes bytes;
    std::string message;
    std::chrono::microseconds compile{0};
    std::vector<RungMiss> misses;  // writes that failed on the way (publish.cpp)
};

struct Counters {
    std::atomic<std::uint64_t> in_process{0}, store{0}, pack{0}, aot{0}, failure{0};
    std::atomic<std::uint64_t> jit_compiles{0}, jit_failures{0};
    std::atomic<std::uint64_t> warmed_later{0};  // stored binaries replaced by their warmed build
    std::atomic<std::uint64_t> resident{0};      // binaries loaded from ResidentBytes
    std::atomic<std::uint64_t> store_write_failures{0};  // see CacheStats
};

struct Cache::Impl {
    Config config;
    // Every call into the compute runtime (identity, bytes to program,
    // context liveness); before `programs`, which asks it.
    std::unique_ptr<service::Loader> loader;
    device_db::DeviceDb db;
    store::TieredStore tiers;
    // Packs (installed, KCACHE_PACKS) are opened at the first request that
    // reaches them, not by Cache::open: a hit in the user store never needs
    // them, and opening one costs a signature check and an SQLite open.
    std::once_flag packs_opened;
    std::vector<service::RefusedPack> refused_packs;  // kept out by the signature policy
    compiler::JitCompiler jit;
    Counters counters;

    service::ProgramCache programs;   // the in-process rung (own lock)
    service::ResidentBytes resident;  // loaded binaries, for new contexts (own lock)

    std::mutex mu;  // guards everything below
    std::map<cl_device_id, device_db::DeviceIdentity> identities;
    // Plans resolved for root devices, by (device, request signature), before
    // any deadline is applied: a new context for a request this cache has
    // answered skips the quirks, rendering and key hashing (cache.cpp). At
    // most config.max_programs; when full, one is dropped to make room. A
    // plan is taken out while its request runs the ladder and put back in its
    // place: only its pointer moves, the plan stays where it was built.
    std::map<PlanKey, std::unique_ptr<Plan>, service::HandlesThenText> plans;
    std::map<store::Key, std::shared_future<Compiled>> inflight;
    struct Worker {
        std::thread thread;
        std::shared_future<Compiled> done;
    };
    std::vector<Worker> workers;
    std::set<pid_t> helpers;  // process groups of running kcache-jit helpers
    bool closing = false;
    // Last, so it is destroyed first: its queued uploads are flushed after
    // join_workers() and before the store closes.
    std::unique_ptr<remote::Client> remote;

    Impl(Config c, std::unique_ptr<service::Loader> l, device_db::DeviceDb d, store::TieredStore t);
    ~Impl();

    // cache.cpp: the in-process rung before any preparation; nullopt on a miss.
    std::optional<Program> repeat_hit(cl_context context, cl_device_id device,
                                      const std::string& signature, bool& context_known);
    // cache.cpp: the plans above. take_plan takes one out, or returns null
    // (another thread asking meanwhile resolves its own); keep_plan puts one
    // (back), for a root device (`root`: known to be one).
    std::unique_ptr<Plan> take_plan(cl_device_id device, const std::string& signature);
    void keep_plan(cl_device_id device, std::string signature, std::unique_ptr<Plan> plan,
                   bool root);

    // cache.cpp: opens the packs into `tiers` and fills `refused_packs`,
    // once; every reader of the packs calls it first.
    void open_packs_once();

    // ladder.cpp
    Result<device_db::DeviceIdentity, std::string> identity(cl_device_id device);
    // The ladder for `plan`; a program it answers with is kept for the
    // context with `signature` (the request's) resolving to it. When
    // `context_known` is false no program is kept for (context, device), and
    // the in-process rung is not looked at.
    Program run_ladder(cl_context context, cl_device_id device, Plan& plan,
                       const std::string& signature, bool context_known);
    std::optional<service::ProgramRef> try_resident(cl_context context, cl_device_id device,
                                                    const Plan& plan, Outcome& out);
    // Rung 2 from the user store's hot copy of the entry: no SQLite (see
    // Store::get_hot); not for verify_before_use, which reads the store.
    std::optional<service::ProgramRef> try_hot(cl_context context, cl_device_id device,
                                               const Plan& plan, Outcome& out);
    // Rungs 2 and 3: the exact binary (user store, packs, remote), then an AOT
    // binary for the device's target; each miss is added to `out`.
    std::optional<service::ProgramRef> try_stored(cl_context context, cl_device_id device,
                                                  Plan& plan, Outcome& out);
    std::optional<service::ProgramRef> load_stored(cl_context context, cl_device_id device,
                                                   const Plan& plan, store::TieredHit& hit,
                                                   Outcome& out);
    std::optional<service::ProgramRef> try_aot(cl_context context, cl_device_id device,
                                               const Plan& plan, Outcome& out);
    bool answer_from_failure_record(const Plan& plan, Outcome& out);
    std::optional<service::ProgramRef> try_jit(cl_context context, cl_device_id device,
                                               const Plan& plan, Outcome& out);
    // The user store when it may be written (not read-only), else nullptr.
    store::Store* writable_user_store();
    // Where good load checks of binaries built elsewhere are kept (binary_vouch.hpp).
    std::filesystem::path vouched_dir();

    // publish.cpp: where produced bytes go, and every write to the user
    // store; a failed write is counted and added to `misses` (null: logged).
    enum class Share { now, later };  // later: the JIT warm-up's hook shares
    // After `produced` answered `plan` with `bytes`: a remote hit is stored
    // by a worker, AOT and JIT bytes are stored and shared with the remote
    // tier (`share`), and the bytes are kept resident.
    void publish(const Plan& plan, store::Bytes bytes, const store::Provenance& provenance,
                 Rung produced, Share share, std::vector<RungMiss>* misses);
    bool store_put(const Plan& plan, std::span<const std::uint8_t> bytes,
                   const store::Provenance& provenance, store::PutMode mode,
                   std::vector<RungMiss>* misses);
    void store_failure(const Plan& plan, store::FailureKind kind, const std::string& detail,
                       std::int64_t budget_ms, std::vector<RungMiss>* misses);
    void store_remove(const Plan& plan, std::vector<RungMiss>* misses);
    void write_failed(const std::string& what, const std::string& why,
                      std::vector<RungMiss>* misses);
    void backfill(const Plan& plan, store::Bytes bytes, store::Provenance provenance);
    // Keeps `bytes` in `resident` when the plan may use stored binaries,
    // under the rung a later process would find them in (`produced` is the
    // rung that made them).
    void keep_resident(const Plan& plan, store::Bytes bytes, Rung produced);

    // remote_rung.cpp
    std::optional<service::ProgramRef> try_remote(cl_context context, cl_device_id device,
                                                  Plan& plan, Outcome& out);
    // publish.cpp: queues `bytes` for upload when a writable remote is configured.
    void share(const store::KeyFields& fields, std::span<const std::uint8_t> bytes,
               const store::Provenance& provenance);

    // flight.cpp
    std::shared_future<Compiled> start_compile(const Plan& plan,
                                               const device_db::DeviceIdentity& id);
    Compiled compile_now(const Plan& plan, const compiler::JitRequest& request);
    // Replaces the stored binary of `plan` (and the one kept in `resident`)
    // by the build the helper warmed up after answering.
    void store_warmed(const Plan& plan, const compiler::JitResult& warmed,
                      const store::Provenance& provenance);
    // Waits for warm-ups that follow an answer, then stops every compile.
    void join_workers();
};

// Registers a helper that just started (JitConfig::on_start), so that closing
// the cache can kill it.
void track_helper_start(Cache::Impl& impl, pid_t pid);

// Maps a recorded failure kind to the status callers see.
StatusCode status_of(store::FailureKind kind);

}  // namespace kcache
