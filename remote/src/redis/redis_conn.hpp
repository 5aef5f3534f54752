#pragma once
// One connection to one Redis server over hiredis (no TLS: Debian 12's
// hiredis 0.14 has none), logged in (AUTH, SELECT) when it is opened, and a
// pool of idle connections per server so that a process connects once.
// Commands go out pipelined: all written, then all replies read. Internal.

#include <hiredis/hiredis.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "backend.hpp"
#include "redis_url.hpp"

namespace kcache::remote {

struct RedisReplyDeleter {
    void operator()(redisReply* r) const { freeReplyObject(r); }
};
using RedisReplyPtr = std::unique_ptr<redisReply, RedisReplyDeleter>;

struct RedisContextDeleter {
    void operator()(redisContext* c) const { redisFree(c); }
};
using RedisContextPtr = std::unique_ptr<redisContext, RedisContextDeleter>;

// One command: its words (binary-safe).
using RedisCommand = std::vector<std::string_view>;

// Who logs in, where, and how long anything may take.
struct RedisLogin {
    std::string user;      // empty: the default user
    std::string password;  // empty: no AUTH
    int db = 0;
    std::chrono::milliseconds connect_timeout{1000};
    std::chrono::milliseconds timeout{3000};  // each read or write of a request
};

// The reply status a Redis error reply stands for, on the HTTP scale the
// client and its breaker read: 401 (NOAUTH, WRONGPASS), 403 (NOPERM,
// READONLY), 421 (MOVED/ASK outside a cluster client), 503 (LOADING, BUSY,
// MASTERDOWN, CLUSTERDOWN, TRYAGAIN), 507 (OOM), 500 for any other.
long redis_error_status(std::string_view error);

class RedisConn {
  public:
    // Connects to `node` and logs in; a failure (unreachable, timeout, or
    // the refusal of AUTH/SELECT with its status) named after `server`.
    static Result<RedisConn, Failure> open(const RedisNode& node, const RedisLogin& login,
                                           const std::string& server);

    // Sends `commands` pipelined and reads one reply each (error replies
    // included); a transport failure (timeout, closed, …) otherwise, after
    // which this connection is unusable.
    Result<std::vector<RedisReplyPtr>, Failure> exchange(const std::vector<RedisCommand>& commands);

    const RedisNode& node() const { return node_; }
    // Whether this process opened it: a forked child never shares its
    // parent's connection (the replies of both would interleave).
    bool ours() const { return owner_ == ::getpid(); }

  private:
    RedisConn(RedisContextPtr c, RedisNode node, std::string server)
        : c_(std::move(c)), node_(std::move(node)), server_(std::move(server)) {}
    Failure io_failure(const std::string& what) const;

    RedisContextPtr c_;
    RedisNode node_;
    std::string server_;
    pid_t owner_ = ::getpid();
};

// Idle connections by node, user and database.
class RedisPool {
  public:
    // An idle connection to `node` as `login`, or a new one; `reused` says which.
    Result<RedisConn, Failure> take(const RedisNode& node, const RedisLogin& login,
                                    const std::string& server, bool& reused);
    void give_back(const RedisLogin& login, RedisConn conn);
    // Opens a connection to `node` as `login` and keeps it idle, unless one
    // is idle already; false when it cannot be opened.
    bool prime(const RedisNode& node, const RedisLogin& login, const std::string& server);
    // Drops the idle connections to `node` (it failed: they are likely dead too).
    void drop(const RedisNode& node);

  private:
    static std::string slot_of(const RedisNode& node, const RedisLogin& login);
    std::mutex mu_;
    std::map<std::string, std::vector<RedisConn>> idle_;
};

// Sends `commands` to `node` on a pooled connection; a reused connection
// that fails before any reply (the server restarted, an idle timeout closed
// it) is replaced once by a new one. Every command must be idempotent.
Result<std::vector<RedisReplyPtr>, Failure> redis_exchange(
    RedisPool& pool, const RedisNode& node, const RedisLogin& login, const std::string& server,
    const std::vector<RedisCommand>& commands);

}  // namespace kcache::remote
