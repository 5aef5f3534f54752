#pragma once
// Client::Impl: settings, the backends, the breaker, counters and the
// background upload queue. Split over client.cpp (requests) and queue.cpp.

#include <condition_variable>
#include <deque>
#include <thread>

#include "backend.hpp"
#include "breaker.hpp"
#include "kcache/remote/envelope.hpp"
#include "kcache/remote/remote.hpp"

namespace kcache::remote {

struct AtomicCounters {
    std::atomic<std::uint64_t> hits{0}, misses{0}, errors{0}, timeouts{0}, corrupt{0};
    std::atomic<std::uint64_t> uploads{0}, upload_failures{0};
};

struct Upload {
    store::KeyFields fields;
    store::Bytes bytes;
    store::Provenance provenance;
};

struct Client::Impl {
    Settings settings;
    Backends backends;  // by URL scheme (backends.cpp), opened by Client::open
    Breaker breaker;
    AtomicCounters counters;
    std::optional<store::SecretKey> signing_key;  // signs uploads (signing.cpp)

    std::mutex mu;                 // guards the queue below
    std::condition_variable wake;  // the worker: work or stop
    std::condition_variable idle;  // flush(): the queue drained
    std::deque<Upload> queue;
    bool busy = false;  // the worker is sending one
    bool stopping = false;
    std::thread worker;  // started at the first enqueue

    explicit Impl(Settings s);

    // One request through the breaker, to the backend of `url`; a
    // server-side failure (transport, timeout, 5xx) marks the server down,
    // other answers close the mark.
    Result<Reply, Failure> send(Op op, const std::string& url,
                                std::span<const std::uint8_t> body = {});
    // GET of `url`, decoded and verified as the object of `key`; a typed
    // error otherwise (not counted: the caller decides what it was).
    Result<Envelope, RemoteError> get_object(const store::Key& key, const std::string& url);
    // Uploads one object now (see Client::upload), telling settings.observe.
    Status<RemoteError> upload_one(const store::KeyFields& fields,
                                   std::span<const std::uint8_t> bytes,
                                   const store::Provenance& provenance);
    Status<RemoteError> upload_unobserved(const store::KeyFields& fields,
                                          std::span<const std::uint8_t> bytes,
                                          const store::Provenance& provenance);
    // What downloads are checked against: the policy and the trusted keys.
    ObjectTrust trust() const;
    // The envelope to PUT for an entry, signed with `signing_key`; a config
    // error when signatures are required and there is no key.
    Result<store::Bytes, RemoteError> object_for_upload(const store::KeyFields& fields,
                                                        std::span<const std::uint8_t> bytes,
                                                        const store::Provenance& provenance) const;
    // Counts `e` as an error of its kind (timeouts and corrupt apart).
    void count_error(const RemoteError& e);
    void run_worker();
    void stop_worker(std::chrono::milliseconds limit);
};

// Why nothing is uploaded by a node that requires signatures but has no key.
inline constexpr const char* kNoSigningKey =
    "no signing key, and signed objects are required (KCACHE_REMOTE_REQUIRE_SIGNED): nothing "
    "is uploaded; set KCACHE_REMOTE_SIGNING_KEY to a key of `kcache keygen` whose .pub the "
    "readers trust";

// A config error when a plain http:// URL carries credentials (user:password@)
// and `settings` does not allow them over http.
Status<RemoteError> check_url_credentials(const Settings& settings);
// The secret key of `settings.signing_key_file` (nullopt when unset); a
// config error naming the file when it cannot be read or parsed.
Result<std::optional<store::SecretKey>, RemoteError> load_signing_key(const Settings& settings);

// The object URL of `key` on the base URL that rendezvous hashing picks.
std::string url_of(const Settings& settings, const store::Key& key);
// The base URL of `urls` that owns `key`.
const std::string& shard_of(const std::vector<std::string>& urls, const store::Key& key);

// True for errors that say the server itself is down or failing, or that it
// refuses this node for now: 429 (too many requests), and 401 or 403 that
// come with a Retry-After (`retry_after`). A 401/403 without one (a
// read-only server refusing a PUT) leaves the breaker closed.
bool trips_breaker(RemoteErrc code, long status, bool retry_after);

}  // namespace kcache::remote
