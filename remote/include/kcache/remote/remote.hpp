#pragma once
// The remote tier: a shared object store (any HTTP server with GET, HEAD and
// PUT on plain URLs, nginx WebDAV the reference; an S3 bucket). Objects are
// self-verifying envelopes under <base>/kcache/v1/<first 2 hex>/<64-hex key>,
// signed by their writer and checked against trusted keys (envelope.hpp).
// Every failure is a typed, counted miss; a circuit breaker shared by the
// node's processes (a file in the user store's directory) skips a server that
// just failed. Thread-safe.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/remote/envelope.hpp"
#include "kcache/remote/gc.hpp"
#include "kcache/store/types.hpp"

namespace kcache::remote {

// Whether the client may send PUT (and DELETE for the doctor's probe).
enum class Access { read_write, read_only };

// Whether a bearer token, or credentials in a URL (user:password@), may go
// over plain http.
enum class PlainHttpToken { refuse, allow };

// How s3:// requests name the bucket: in the path (endpoint/bucket/key) or
// in the host name (bucket.endpoint/key); automatic is virtual-hosted on
// AWS's own endpoint and path-style on any other.
enum class S3UrlStyle { automatic, path, virtual_hosted };

// Where and as whom s3://bucket/prefix base URLs are reached (docs/remote.md, "S3").
struct S3Settings {
    std::string endpoint;  // "http(s)://host[:port]"; empty: https://s3.<region>.amazonaws.com
    std::string region;    // empty: AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1
    S3UrlStyle url_style = S3UrlStyle::automatic;
    // An AWS credentials file that wins over the environment; empty: the
    // environment (AWS_ACCESS_KEY_ID, …), then AWS_SHARED_CREDENTIALS_FILE or
    // ~/.aws/credentials.
    std::filesystem::path credentials_file;
    std::string profile;  // the file's section; empty: AWS_PROFILE, else "default"
};

// A namespace this node reads (namespaces.hpp; docs/remote.md,
// "Namespaces") and the keys trusted for the objects read from it: these
// alone (the global trusted keys do not count for a namespace).
struct Namespace {
    std::string name;
    store::TrustedKeys trusted_keys;
};

// A remote request, for RemoteObserver.
enum class RemoteOp { get, put };
// Told of each download (fetch) and upload: which, when it began, whether it
// succeeded (the service's metrics and trace). Called on the requesting
// thread (uploads: the queue's); must not throw.
using RemoteObserver =
    std::function<void(RemoteOp op, std::chrono::steady_clock::time_point start, bool ok)>;

// Everything the client needs; the service fills it from kcache::Config.
struct Settings {
    // http://, https://, s3:// or redis(+cluster)://; keys sharded over
    // them. A URL may end in attributes its backend reads (`?name=value&…`:
    // S3's region, endpoint, …); Client::open moves them into
    // `url_attributes`, by the URL without them.
    std::vector<std::string> base_urls;
    std::map<std::string, std::string> url_attributes;
    Access access = Access::read_write;
    std::chrono::milliseconds timeout{3000};          // one whole request
    std::chrono::milliseconds connect_timeout{1000};  // TCP (and TLS) connect
    std::filesystem::path token_file;                 // bearer token; empty: none
    // A shell command whose first line of output is the bearer token (an
    // OIDC helper); its answer is kept for `token_lifetime`, and asked again
    // sooner when a server refuses it. Not with `token_file`.
    std::string token_command;
    std::chrono::milliseconds token_lifetime{300'000};
    bool netrc = false;             // credentials from ~/.netrc
    std::filesystem::path ca_file;  // empty: the system CAs
    PlainHttpToken plain_http_token = PlainHttpToken::refuse;
    std::chrono::milliseconds breaker_window{30'000};  // how long a failed server is skipped
    std::chrono::milliseconds ttl{0};  // Redis: an object expires this long after upload; 0: never
    std::filesystem::path state_dir;   // the user store's directory
    std::uint64_t max_object_bytes = 64ull << 20;  // a larger object is refused
    long max_redirects = 3;
    std::size_t queue_capacity = 256;  // background uploads waiting; more are dropped
    // Objects must carry a signature by one of `trusted_keys` (envelope.hpp).
    ObjectSignatures signatures = ObjectSignatures::require;
    store::TrustedKeys trusted_keys;
    // Keys the operator names as trusted builders (docs/remote.md, "Trusted
    // builders"): trusted for signatures too, and an object one of them
    // signed is used without the load check of binaries built elsewhere.
    // Empty (the default): every object is checked.
    store::TrustedKeys trusted_builders;
    // The minisign secret key (`kcache keygen`) that signs uploads; empty:
    // uploads go unsigned, and under ObjectSignatures::require none are sent.
    std::filesystem::path signing_key_file;
    // For s3:// base URLs: what a URL's own attributes do not set (the
    // KCACHE_REMOTE_S3_* settings, read for one release more).
    S3Settings s3;
    // KCACHE_REMOTE_NAMESPACE: uploads go to the first, reads try each in
    // order (the first verified object wins); empty: the default layout,
    // checked against `trusted_keys`.
    std::vector<Namespace> namespaces;
    // Told of each request (empty: none).
    RemoteObserver observe;
};

enum class RemoteErrc {
    not_found,     // 404: a plain miss
    corrupt,       // bad envelope, checksum or frame
    wrong_key,     // the envelope's fields hash to another key
    too_large,     // over Settings::max_object_bytes
    http_status,   // an unexpected status (5xx, 403, 405, …)
    redirects,     // too many redirects
    timeout,       // the request ran past its time
    unreachable,   // connect refused, host unknown
    tls,           // certificate or handshake refused
    breaker_open,  // skipped: the server failed within the breaker window
    read_only,     // a write on a read-only client (nothing was sent)
    config,        // bad settings (URL, token file, token over http)
    transport,     // any other libcurl failure
};

// Returns a stable lower-case name ("not_found", "wrong_key", …).
const char* to_string(RemoteErrc code);

struct RemoteError {
    RemoteErrc code;
    std::string message;  // names the URL and what was wrong
};

// Counters of one client (this process), one field per row of
// <kcache/remote/counters.def>; persisted by add_to_stats_file.
struct Counters {
#define KCACHE_REMOTE_COUNTER(field, doc) std::uint64_t field = 0;
#include "kcache/remote/counters.def"
#undef KCACHE_REMOTE_COUNTER
};

// Counters by namespace name (Client::namespace_counters, the stats file).
using NamespaceCounters = std::map<std::string, Counters>;

// Why uploads were not sent or failed, by kind: how many, and the first
// message of that kind (it names the URL and what the server said).
struct UploadNote {
    std::string reason;
    std::uint64_t count = 0;
};

// Whether a download must pass the load check of binaries built elsewhere
// before the process loads it (canary/include/kcache/canary/binary_vouch.hpp).
enum class LoadCheck {
    required,              // every object, unless…
    skip_trusted_builder,  // …signed by a key of Settings::trusted_builders
};

// A verified download: the entry's fields, provenance and raw bytes.
struct Fetched {
    store::KeyFields fields;
    store::Provenance provenance;
    store::Bytes bytes;
    LoadCheck load_check = LoadCheck::required;
};

// What the server holds under an entry's key, by a GET verified as a download is.
enum class Holding {
    verified,  // the object, whole: its fields hash to the key, its checksum holds
    absent,    // 404
    unusable,  // something else answers 200 there (an HTML page, a truncated or
               // flipped object, one over the size cap): it should be replaced
};
struct Held {
    Holding holding = Holding::absent;
    std::string detail;  // for absent and unusable: what the server answered
};

// What the doctor's probe found, one line per check.
struct ProbeLine {
    std::string what;  // "GET", "HEAD", "PUT", "DELETE"
    bool ok = false;
    std::string detail;
};

// Where Client::warm_up works.
enum class WarmUp { background, now };

class Client {
  public:
    // Checks `settings` (URL schemes, token file, token over http) and
    // returns a client; config error otherwise. Starts no request.
    static Result<std::unique_ptr<Client>, RemoteError> open(Settings settings);
    // Stops a warm-up in progress (a connect at once; a Redis log-in or the
    // breaker's trial within one timeout), flushes queued uploads (bounded by twice the timeout),
    // adds this process's counters to the stats file.
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    // Does, for each server, what its first request would otherwise do
    // first: a TCP connection to each HTTP or S3 endpoint (TLS is left to
    // the request), S3's signing set-up, a logged-in connection to each
    // Redis server (a cluster: its slot map and each master), the breaker's
    // first trial of each server where the node has no fresh up mark (a
    // HEAD of a probe object no entry has; a failure there is counted and
    // marks the server down, as the first request's would), and a first
    // payload decode. A server the breaker skips is left alone; a connection
    // that fails here the first request tries itself. `when`: on a thread
    // of its own (joined when the client closes), or on the caller's. Once
    // per client; later calls do nothing.
    void warm_up(WarmUp when = WarmUp::background);

    // The verified object for `fields`; a typed error otherwise (counted).
    Result<Fetched, RemoteError> fetch(const store::KeyFields& fields);
    // The same for the key a caller has already made of its fields (a
    // request's plan): not hashed again.
    Result<Fetched, RemoteError> fetch(const store::Key& key);
    // Whether the server holds an object under `key` (HEAD: a path answers,
    // not necessarily this object; see held()).
    Result<bool, RemoteError> exists(const store::Key& key);
    // Whether the server holds the verified object for `fields` (a GET, the
    // envelope checked as fetch() checks it; not counted as a hit or miss);
    // a transport or unexpected status error otherwise (counted).
    Result<Held, RemoteError> held(const store::KeyFields& fields);
    // Uploads `bytes` as the object for `fields` now (PUT); read_only on a
    // read-only client without sending anything (counted either way).
    Status<RemoteError> upload(const store::KeyFields& fields, std::span<const std::uint8_t> bytes,
                               const store::Provenance& provenance);

    // One object of upload_many (the pointed-to parts outlive the call).
    struct UploadItem {
        const store::KeyFields* fields;
        std::span<const std::uint8_t> bytes;
        const store::Provenance* provenance;
    };
    // fetch(), held() and upload() of many objects at once (kcache pull and
    // push): the answers in order, each checked and counted as the single
    // call does; requests to one server go out as one batch, which Redis
    // pipelines (one round trip per server and batch), other backends send
    // one after another.
    std::vector<Result<Fetched, RemoteError>> fetch_many(
        const std::vector<store::KeyFields>& fields);
    std::vector<Result<Held, RemoteError>> held_many(const std::vector<store::KeyFields>& fields);
    std::vector<Status<RemoteError>> upload_many(const std::vector<UploadItem>& items);

    // Queues an upload for the background thread (no-op when read-only; a
    // full queue drops it and counts an upload failure). Never blocks on I/O.
    void enqueue(const store::KeyFields& fields, std::span<const std::uint8_t> bytes,
                 const store::Provenance& provenance);
    // Waits until the queue is empty or `limit` passed; returns how many were left.
    std::size_t flush(std::chrono::milliseconds limit);
    // GET/HEAD of a probe key nobody stored (a GET must answer 404, not a
    // body), and for writers PUT of a probe object (read back by a GET and
    // compared) and DELETE.
    std::vector<ProbeLine> probe();

    // The id of the key that signs this client's uploads; nullopt when none.
    std::optional<store::KeyId> signing_key() const;
    // Why this client sends no uploads (read-only, or no signing key while
    // signatures are required); nullopt when it does.
    std::optional<std::string> why_no_uploads() const;

    // This client's counters.
    Counters counters() const;
    // Its counters of each namespace asked (empty without namespaces): a
    // lookup counts in each namespace it asked, an upload in the own one.
    NamespaceCounters namespace_counters() const;
    // Lists the objects of namespace `request.name` on every server and
    // removes those older than `request.older_than` (gc.hpp); a config
    // error for a bad name, the first listing failure otherwise (nothing
    // removed then).
    Result<GcReport, RemoteError> gc(const GcRequest& request);
    // Why this client's uploads were skipped or failed so far, each kind once
    // (read-only, no signing key, queue full, not sent before closing, the
    // breaker open, the server's refusal, a timeout, …), in the order first seen.
    std::vector<UploadNote> upload_notes() const;
    const Settings& settings() const;
    // The base URL that owns `key` (rendezvous hashing).
    const std::string& shard_for(const store::Key& key) const;
    // The object URL of `key`.
    std::string object_url(const store::Key& key) const;

    struct Impl;

  private:
    explicit Client(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

// Adds `delta` (and each namespace's `by_namespace`) to the counters kept
// in `state_dir` (a small file updated under a lock, shared by the node's
// processes); false on an I/O error.
bool add_to_stats_file(const std::filesystem::path& state_dir, const Counters& delta,
                       const NamespaceCounters& by_namespace = {});
// The counters kept in `state_dir` (zeros when there is no file yet).
Counters read_stats_file(const std::filesystem::path& state_dir);
// The namespaces' counters kept in `state_dir` (empty when none).
NamespaceCounters read_namespace_stats(const std::filesystem::path& state_dir);

// Where the S3 credentials of the base URL `url` (its attributes over
// `defaults`) come from and the access key id they carry (never the
// secret), e.g. "AKIA… from the environment (AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY)"; a config error when none are found, a
// credentials file is unusable or an attribute is (s3_credentials.cpp).
Result<std::string, RemoteError> s3_credentials_origin(const std::string& url,
                                                       const S3Settings& defaults);

// For the doctor: what serves the Redis base URL `url` (server or cluster
// seeds, database, key prefix, TTL) and as whom, with where the password
// comes from (never the password); a config error for a URL this build
// cannot serve (redis_backend.cpp).
Result<std::string, RemoteError> redis_origin(const std::string& url, const Settings& settings);

// `text` with the password of each URL of `urls` that carries one
// ("scheme://user:password@host…") replaced by "***", for what is printed.
std::string without_passwords(std::string text, const std::vector<std::string>& urls);

// Returns the relative object path of `key`: "kcache/v1/ab/abcd…".
std::string object_path(const store::Key& key);

}  // namespace kcache::remote
