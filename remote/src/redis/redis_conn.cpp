// Redis connections over hiredis: connect, log in, pipelined exchanges, and
// the pool that keeps them for the process.

#include "redis_conn.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace kcache::remote {
namespace {

// Idle connections kept per node: as many as threads of one process use at once.
constexpr std::size_t kIdlePerNode = 8;

timeval to_timeval(std::chrono::milliseconds ms) {
    return timeval{static_cast<time_t>(ms.count() / 1000),
                   static_cast<suseconds_t>((ms.count() % 1000) * 1000)};
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

// A failure of transport kind `code` with `message`; no status: the breaker's business.
Failure transport_failure(RemoteErrc code, std::string message) {
    return Failure{RemoteError{code, std::move(message)}};
}

// How a hiredis context error reads as a typed failure. `err` is the errno
// seen right after the failing call.
RemoteErrc code_of(const redisContext* c, int err) {
    if (c->err == REDIS_ERR_EOF) {
        return RemoteErrc::unreachable;  // the server closed the connection
    }
    const std::string_view text(c->errstr);
    if (err == EAGAIN || err == EWOULDBLOCK || err == ETIMEDOUT || err == EINPROGRESS ||
        text.find("timed out") != std::string_view::npos ||
        text.find("temporarily unavailable") != std::string_view::npos) {
        return RemoteErrc::timeout;
    }
    if (c->err == REDIS_ERR_IO || c->err == REDIS_ERR_OTHER) {
        return RemoteErrc::unreachable;  // refused, reset, no route, unknown host
    }
    return RemoteErrc::transport;  // a protocol error: not a Redis server
}

// Sends one command and reads its reply on a connection being opened.
Result<RedisReplyPtr, Failure> command(redisContext* c, const RedisCommand& words,
                                       const std::string& server, const char* what) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (std::string_view w : words) {
        argv.push_back(w.data());
        lens.push_back(w.size());
    }
    errno = 0;
    RedisReplyPtr r(static_cast<redisReply*>(
        redisCommandArgv(c, static_cast<int>(argv.size()), argv.data(), lens.data())));
    if (!r) {
        const int err = errno;
        return fail(transport_failure(code_of(c, err),
                                      std::string(what) + " on " + server + ": " + c->errstr));
    }
    if (r->type == REDIS_REPLY_ERROR) {
        const std::string text(r->str, r->len);
        const long status = redis_error_status(text);
        return fail(Failure{RemoteError{RemoteErrc::http_status,
                                        std::string(what) + " refused by " + server + ": " + text},
                            status});
    }
    return r;
}

}  // namespace

long redis_error_status(std::string_view error) {
    for (std::string_view e :
         {"NOAUTH", "WRONGPASS", "ERR invalid password", "ERR AUTH", "ERR Client sent AUTH"}) {
        if (starts_with(error, e)) {
            return 401;
        }
    }
    if (starts_with(error, "NOPERM") || starts_with(error, "READONLY")) {
        return 403;
    }
    if (starts_with(error, "MOVED ") || starts_with(error, "ASK ")) {
        return 421;
    }
    for (std::string_view e : {"LOADING", "BUSY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN"}) {
        if (starts_with(error, e)) {
            return 503;
        }
    }
    return starts_with(error, "OOM") ? 507 : 500;
}

Result<RedisConn, Failure> RedisConn::open(const RedisNode& node, const RedisLogin& login,
                                           const std::string& server) {
    errno = 0;
    RedisContextPtr c(
        redisConnectWithTimeout(node.host.c_str(), node.port, to_timeval(login.connect_timeout)));
    const int err = errno;
    if (!c) {
        return fail(transport_failure(RemoteErrc::transport,
                                      "connecting to " + server + ": out of memory"));
    }
    const std::string name = server + " (" + to_string(node) + ")";
    if (c->err != 0) {
        return fail(
            transport_failure(code_of(c.get(), err), "connecting to " + name + ": " + c->errstr));
    }
    if (redisSetTimeout(c.get(), to_timeval(login.timeout)) != REDIS_OK) {
        return fail(transport_failure(RemoteErrc::transport, "setting timeouts on " + name));
    }
    if (!login.password.empty()) {
        const std::string who = login.user.empty() ? "the default user" : "user " + login.user;
        RedisCommand auth{"AUTH"};
        if (!login.user.empty()) {
            auth.push_back(login.user);
        }
        auth.push_back(login.password);
        if (auto r = command(c.get(), auth, name, ("AUTH as " + who).c_str()); !r) {
            return fail(r.error());
        }
    }
    if (login.db != 0) {
        const std::string db = std::to_string(login.db);
        if (auto r = command(c.get(), {"SELECT", db}, name, ("SELECT " + db).c_str()); !r) {
            return fail(r.error());
        }
    }
    return RedisConn(std::move(c), node, name);
}

Failure RedisConn::io_failure(const std::string& what) const {
    return transport_failure(code_of(c_.get(), errno), what + " " + server_ + ": " + c_->errstr);
}

Result<std::vector<RedisReplyPtr>, Failure> RedisConn::exchange(
    const std::vector<RedisCommand>& commands) {
    for (const RedisCommand& words : commands) {
        std::vector<const char*> argv;
        std::vector<std::size_t> lens;
        for (std::string_view w : words) {
            argv.push_back(w.data());
            lens.push_back(w.size());
        }
        if (redisAppendCommandArgv(c_.get(), static_cast<int>(argv.size()), argv.data(),
                                   lens.data()) != REDIS_OK) {
            return fail(io_failure("queueing a command for"));
        }
    }
    std::vector<RedisReplyPtr> replies;
    for (std::size_t i = 0; i < commands.size(); ++i) {
        void* r = nullptr;
        errno = 0;
        if (redisGetReply(c_.get(), &r) != REDIS_OK || r == nullptr) {
            return fail(io_failure(replies.empty() ? "sending to" : "reading from"));
        }
        replies.emplace_back(static_cast<redisReply*>(r));
    }
    return replies;
}

std::string RedisPool::slot_of(const RedisNode& node, const RedisLogin& login) {
    return to_string(node) + "/" + std::to_string(login.db) + "/" + login.user;
}

Result<RedisConn, Failure> RedisPool::take(const RedisNode& node, const RedisLogin& login,
                                           const std::string& server, bool& reused) {
    {
        std::lock_guard g(mu_);
        auto it = idle_.find(slot_of(node, login));
        if (it != idle_.end()) {
            std::erase_if(it->second, [](const RedisConn& c) { return !c.ours(); });
        }
        if (it != idle_.end() && !it->second.empty()) {
            RedisConn conn = std::move(it->second.back());
            it->second.pop_back();
            reused = true;
            return conn;
        }
    }
    reused = false;
    return RedisConn::open(node, login, server);
}

void RedisPool::give_back(const RedisLogin& login, RedisConn conn) {
    std::lock_guard g(mu_);
    auto& idle = idle_[slot_of(conn.node(), login)];
    if (idle.size() < kIdlePerNode) {
        idle.push_back(std::move(conn));
    }
}

bool RedisPool::prime(const RedisNode& node, const RedisLogin& login, const std::string& server) {
    {
        std::lock_guard g(mu_);
        auto it = idle_.find(slot_of(node, login));
        if (it != idle_.end() && std::any_of(it->second.begin(), it->second.end(),
                                             [](const RedisConn& c) { return c.ours(); })) {
            return true;
        }
    }
    auto conn = RedisConn::open(node, login, server);
    if (conn) {
        give_back(login, std::move(*conn));
    }
    return conn.ok();
}

void RedisPool::drop(const RedisNode& node) {
    std::lock_guard g(mu_);
    const std::string prefix = to_string(node) + "/";
    for (auto& [slot, conns] : idle_) {
        if (slot.compare(0, prefix.size(), prefix) == 0) {
            conns.clear();
        }
    }
}

Result<std::vector<RedisReplyPtr>, Failure> redis_exchange(
    RedisPool& pool, const RedisNode& node, const RedisLogin& login, const std::string& server,
    const std::vector<RedisCommand>& commands) {
    for (int attempt = 0;; ++attempt) {
        bool reused = false;
        auto conn = pool.take(node, login, server, reused);
        if (!conn) {
            return fail(conn.error());
        }
        auto replies = conn->exchange(commands);
        if (replies) {
            pool.give_back(login, std::move(*conn));
            return replies;
        }
        pool.drop(node);
        if (!reused || attempt > 0 || replies.error().error.code == RemoteErrc::timeout) {
            return fail(replies.error());
        }
    }
}

}  // namespace kcache::remote
