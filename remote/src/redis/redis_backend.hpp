#pragma once
// The Redis backends' class: redis:// (one server) and redis+cluster://
// (slots routed by redis_cluster.hpp), on hiredis. Requests of one object
// in redis_backend.cpp; cluster routing and batches (pipelined per server
// or cluster node) in redis_route.cpp. Internal.

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "credential.hpp"
#include "redis_cluster.hpp"
#include "redis_conn.hpp"

namespace kcache::remote {

using RedisReplies = std::vector<RedisReplyPtr>;

inline Failure redis_failure(RemoteErrc code, std::string message, long status = 0) {
    return Failure{RemoteError{code, std::move(message)}, status};
}

class RedisBackend final : public Backend {
  public:
    RedisBackend(const Settings& settings, std::shared_ptr<Credential> credential)
        : settings_(settings), credential_(std::move(credential)) {}

    Result<Reply, Failure> get(const std::string& url) override;
    Result<Reply, Failure> head(const std::string& url) override;
    Result<Reply, Failure> put(const std::string& url,
                               std::span<const std::uint8_t> object) override;
    Result<Reply, Failure> remove(const std::string& url) override;
    // A cluster's key: the node serving its slot, once the slot map is known.
    std::string server_of(const std::string& url) override;
    // Pipelined: one exchange per server (a cluster: per node) and batch.
    std::vector<Result<Reply, Failure>> get_many(const std::vector<std::string>& urls) override;
    std::vector<Result<Reply, Failure>> put_many(const std::vector<PutItem>& items) override;
    std::size_t batch_limit() const override { return 64; }
    // A logged-in connection to the server (a cluster: the slot map and one
    // connection to each master), kept in the pool for the first request.
    bool warm_up(const std::string& url, const std::atomic<bool>& stop) override;
    // SCAN of the keys below `dir`, OBJECT IDLETIME as their age (redis_scan.cpp).
    Result<std::vector<ListedObject>, Failure> list(const std::string& dir) override;

  private:
    // The parsed object URL; a config failure when it is not one this backend serves.
    Result<RedisUrl, Failure> target(const std::string& url) const;
    static std::string name(const RedisUrl& u) { return u.server + "/" + u.key; }
    // Who logs in for `u`: its user, and its password or the credential's
    // current secret.
    RedisLogin login(const RedisUrl& u) const;
    // redis_exchange() on `node` as login(u); a log-in refused (401) with
    // the credential's secret is tried once more when refresh() gives
    // another (a rotated password).
    Result<RedisReplies, Failure> exchange(const RedisNode& node, const RedisUrl& u,
                                           const std::vector<RedisCommand>& commands);
    // The first error reply of `replies` as a failure with its status; nullopt when none.
    static std::optional<Failure> error_reply(std::span<const RedisReplyPtr> replies,
                                              const RedisUrl& u, const char* what);
    // `commands` through run(), an error reply among the answers a failure.
    Result<RedisReplies, Failure> ask(const RedisUrl& u, const char* what,
                                      const std::vector<RedisCommand>& commands);
    // `command` on the key of `url`, whose integer answer 0 means no such key;
    // a reply of `status` otherwise.
    Result<Reply, Failure> on_key(const std::string& url, const char* what, const char* command,
                                  long status);
    // `commands` on the server of `u` (a cluster: the node of its key's slot).
    Result<RedisReplies, Failure> run(const RedisUrl& u, const char* what,
                                      const std::vector<RedisCommand>& commands);

    // A get's commands for `u` (the first chunk up to `last`, which outlives them).
    static std::vector<RedisCommand> get_commands(const RedisUrl& u, const std::string& last);
    // The object from the answers `r` to get_commands (reading the rest of a
    // larger object with one more request).
    Result<Reply, Failure> get_answer(const RedisUrl& u, std::span<RedisReplyPtr> r);
    // The SET of `object` under `u`'s key (`ttl` outlives it).
    RedisCommand set_command(const RedisUrl& u, std::span<const std::uint8_t> object,
                             const std::string& ttl) const;
    std::uint64_t first_chunk() const;

    // Cluster routing (redis_route.cpp).
    Result<RedisReplies, Failure> run_cluster(const RedisUrl& u,
                                              const std::vector<RedisCommand>& commands);
    Status<Failure> load_map(SlotMap& map, const RedisUrl& u);
    SlotMap& map_of(const RedisUrl& u);
    // One batch of get_many or put_many: each URL's commands (`per_url` of
    // them) sent in one exchange per server or node; `answer` turns each
    // URL's replies into its reply. A URL redirected (MOVED, ASK) is sent
    // again alone.
    struct Batch;
    std::vector<Result<Reply, Failure>> run_batch(Batch& batch);
    // run_batch's steps: the URLs grouped by the server or node they go to
    // (those that cannot go anywhere answered in `out` already), then one
    // group sent and its answers put in `out`.
    struct BatchGroup;
    using BatchAnswers = std::vector<std::optional<Result<Reply, Failure>>>;
    std::map<std::string, BatchGroup> group_batch(Batch& batch, BatchAnswers& out);
    void send_group(Batch& batch, const BatchGroup& g, BatchAnswers& out);

    const Settings& settings_;
    std::shared_ptr<Credential> credential_;  // the password when a URL names none
    RedisPool pool_;
    std::mutex mu_;                                         // guards maps_
    std::map<std::string, std::unique_ptr<SlotMap>> maps_;  // by cluster (server and user)
};

}  // namespace kcache::remote
