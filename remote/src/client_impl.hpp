#pragma once
// Client::Impl: settings, the backends, the breaker, counters and the
// background upload queue. Split over client.cpp (requests) and queue.cpp.

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "backend.hpp"
#include "breaker.hpp"
#include "kcache/remote/envelope.hpp"
#include "kcache/remote/remote.hpp"

namespace kcache::remote {

struct AtomicCounters {
#define KCACHE_REMOTE_COUNTER(field, doc) std::atomic<std::uint64_t> field{0};
#include "kcache/remote/counters.def"
#undef KCACHE_REMOTE_COUNTER
};

// The counters of `a`, each read once.
inline Counters snapshot(const AtomicCounters& a) {
    Counters c;
#define KCACHE_REMOTE_COUNTER(field, doc) c.field = a.field;
#include "kcache/remote/counters.def"
#undef KCACHE_REMOTE_COUNTER
    return c;
}

// Client::upload_notes: one note per kind of skipped or failed upload
// (upload_notes.cpp).
class UploadNotes {
  public:
    // Counts one upload not sent or failed for `why`; `kind` groups the
    // notes (an error code and the server's status, say).
    void add(const std::string& kind, const std::string& why);
    void add(const RemoteError& e, long status = 0);
    std::vector<UploadNote> list() const;

  private:
    mutable std::mutex mu_;
    std::vector<std::pair<std::string, UploadNote>> notes_;  // (kind, note)
};

// One namespace of Settings::namespaces, as this client reads it
// (namespaces.cpp): its lookups' counters, and the trusted builders that are
// builders there (those also trusted for the namespace).
struct NamespaceState {
    AtomicCounters counters;
    store::TrustedKeys builders;
};

// A config error unless each of `settings.namespaces` has a valid name,
// given once.
Status<RemoteError> check_namespaces(const Settings& settings);
// The state of each of `settings.namespaces`, in order.
std::vector<NamespaceState> namespace_states(const Settings& settings);

struct Upload {
    store::KeyFields fields;
    store::Bytes bytes;
    store::Provenance provenance;
};

struct Client::Impl {
    Settings settings;
    Backends backends;  // by URL scheme (backends.cpp), opened by Client::open
    Breakers breakers;  // one per server (Backend::server_of)
    AtomicCounters counters;
    std::vector<NamespaceState> ns;  // one per Settings::namespaces
    UploadNotes upload_notes;
    std::optional<store::SecretKey> signing_key;  // signs uploads (signing.cpp)

    std::mutex mu;                 // guards the queue below
    std::condition_variable wake;  // the worker: work or stop
    std::condition_variable idle;  // flush(): the queue drained
    std::deque<Upload> queue;
    bool busy = false;  // the worker is sending one
    bool stopping = false;
    std::thread worker;  // started at the first enqueue
    // Sets OpenSSL up for signature checks while the application still
    // starts (store::warm_up_signature_checks); joined when the client closes.
    std::thread warming;
    // Client::warm_up's thread, joined when the client closes by the process
    // that started it (a forked child's copy is not its thread), and what
    // tells it to stop.
    std::unique_ptr<std::thread> warm_up_thread;
    pid_t warm_up_owner = 0;
    std::atomic<bool> warm_up_started{false};
    std::atomic<bool> closing{false};

    explicit Impl(Settings s);

    // One request through the breaker of its server, to the backend of
    // `url`; a server-side failure (transport, timeout, 5xx) marks that
    // server down, other answers close its mark.
    Result<Reply, Failure> send(Op op, const std::string& url,
                                std::span<const std::uint8_t> body = {});
    // Gets (`bodies` empty) or puts (one body per URL) of `urls`, answers in
    // order: grouped by server, each group in batches of the backend's
    // batch_limit (Backend::get_many, put_many: Redis pipelines them), each
    // batch through the server's breaker.
    std::vector<Result<Reply, Failure>> send_many(
        Op op, const std::vector<std::string>& urls,
        const std::vector<std::span<const std::uint8_t>>& bodies = {});
    // One batch of send_many (`indices` into `urls`, at most the backend's
    // batch_limit), its answers into `answers`.
    void send_batch(Op op, Backend& backend, const std::string& server,
                    const std::vector<std::string>& urls,
                    const std::vector<std::span<const std::uint8_t>>& bodies,
                    const std::vector<std::size_t>& indices,
                    std::vector<std::optional<Result<Reply, Failure>>>& answers);
    // Marks `server` down when one of `answers` (to the request or batch
    // `ticket` let through) says it is failing; else closes its mark.
    void judge(Breaker& breaker, Breaker::Ticket& ticket, const std::string& server,
               std::span<const Result<Reply, Failure>> answers);
    // `env`, the answer to a GET of `url` for `key`, decoded and verified
    // against the trust of namespace `in` (trust()).
    Result<Envelope, RemoteError> decode_object(const store::Key& key, const std::string& url,
                                                Result<Reply, Failure> answer, std::size_t in = 0);
    // The object of `key` for fetch(): from the default layout, or from the
    // first namespace in order that holds it verified (each namespace asked
    // counts its outcome); else the error of the first namespace that held
    // something else than nothing, else not_found (namespaces.cpp).
    Result<Envelope, RemoteError> fetch_object(const store::Key& key);
    // fetch_object() of each of `keys`, each namespace asked in one batch.
    std::vector<Result<Envelope, RemoteError>> fetch_objects(const std::vector<store::Key>& keys);
    // Counts `env`, the outcome of a lookup in namespace `in`, there.
    void count_in(std::size_t in, const Result<Envelope, RemoteError>& env);
    // Counts a fetch's outcome and turns it into fetch()'s answer.
    Result<Fetched, RemoteError> fetched(Result<Envelope, RemoteError> env);
    // Counts a held()'s outcome and turns it into its answer.
    Result<Held, RemoteError> held_of(Result<Envelope, RemoteError> env);
    // The signed object for an upload, or why none goes out (counted).
    Result<store::Bytes, RemoteError> prepare_upload(const store::KeyFields& fields,
                                                     std::span<const std::uint8_t> bytes,
                                                     const store::Provenance& provenance);
    // Counts the answer to an upload's PUT.
    Status<RemoteError> uploaded(Result<Reply, Failure> r);
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
    // What downloads are checked against: the policy and the trusted keys
    // (with namespaces: those of namespace `in`).
    ObjectTrust trust(std::size_t in = 0) const;
    // The envelope to PUT for an entry, signed with `signing_key`; a config
    // error when signatures are required and there is no key.
    Result<store::Bytes, RemoteError> object_for_upload(const store::KeyFields& fields,
                                                        std::span<const std::uint8_t> bytes,
                                                        const store::Provenance& provenance) const;
    // Counts `e` as an error of its kind (timeouts and corrupt apart).
    void count_error(const RemoteError& e);
    // Client::warm_up's work (warm_up.cpp): each base URL's backend warms
    // its servers, those the breaker skips left out, then try_servers.
    void warm_up_servers();
    // The breaker's first trial of each server behind the base URL `base`
    // (a HEAD of a probe object), where the node needs one.
    void try_servers(Backend& backend, const std::string& base);
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

// The object URL of `key` under the base URL `base`.
std::string url_under(std::string base, const store::Key& key);
// The object URL of `key` on the base URL that rendezvous hashing picks, in
// the own namespace (the default layout without namespaces).
std::string url_of(const Settings& settings, const store::Key& key);
// The same in namespace `in` of Settings::namespaces (none: the default layout).
std::string url_in(const Settings& settings, std::size_t in, const store::Key& key);
// The base URL of `urls` that owns `key`.
const std::string& shard_of(const std::vector<std::string>& urls, const store::Key& key);

// True for errors that say the server itself is down or failing, or that it
// refuses this node for now: 429 (too many requests), and 401 or 403 that
// come with a Retry-After (`retry_after`). A 401/403 without one (a
// read-only server refusing a PUT) leaves the breaker closed.
bool trips_breaker(RemoteErrc code, long status, bool retry_after);

}  // namespace kcache::remote
