// The Redis backends: redis:// (one server) and redis+cluster:// (slots
// routed by redis_cluster.hpp), on hiredis. An object is one string value
// under its key (redis_url.hpp); rediss:// is refused, hiredis 0.14 having
// no TLS.
//
//   get    := EXISTS k, STRLEN k, GETRANGE k 0 <first chunk - 1>   (one round trip)
//             [GETRANGE k <first chunk> <len - 1>]                  (only a larger object)
//   head   := EXISTS k
//   put    := SET k <object> [PX <ttl>]
//   remove := DEL k
//
// STRLEN bounds a get: an object over the size cap is refused after at
// most the first chunk, never read whole. Answers are given the HTTP
// statuses the client and its breaker read (200 found, 404 absent, 201
// stored, 204 deleted; error replies per redis_error_status), so the breaker
// decides for Redis as for HTTP. Connections are pooled per process
// (redis_conn.hpp); every command is idempotent, so a pooled connection
// the server closed is replaced and the request sent once more. A batch
// (get_many, put_many) sends the commands of every object for one server
// or cluster node in one pipelined exchange (redis_route.cpp).

#include "redis_backend.hpp"

#include <algorithm>
#include <cstring>

#include "kcache/common/log.hpp"

namespace kcache::remote {
namespace {

// A get reads objects up to this size in its first round trip.
constexpr std::uint64_t kFirstChunk = 1 << 20;

constexpr const char* kNoRedisTls =
    "rediss:// (Redis over TLS) is not supported: this build's hiredis (0.14) has no TLS; use "
    "redis:// on a trusted network or through a TLS tunnel (stunnel, spiped)";

}  // namespace

std::uint64_t RedisBackend::first_chunk() const {
    return std::min(kFirstChunk, settings_.max_object_bytes);
}

std::vector<RedisCommand> RedisBackend::get_commands(const RedisUrl& u, const std::string& last) {
    return {{"EXISTS", u.key}, {"STRLEN", u.key}, {"GETRANGE", u.key, "0", last}};
}

Result<Reply, Failure> RedisBackend::get(const std::string& url) {
    auto u = target(url);
    if (!u) {
        return fail(u.error());
    }
    const std::string last = std::to_string(first_chunk() - 1);
    auto r = run(*u, "GET", get_commands(*u, last));
    if (!r) {
        return fail(r.error());
    }
    return get_answer(*u, *r);
}

Result<Reply, Failure> RedisBackend::get_answer(const RedisUrl& u, std::span<RedisReplyPtr> r) {
    const redisReply* exists = r[0].get();
    const redisReply* len = r[1].get();
    if (len->type == REDIS_REPLY_ERROR && std::string_view(len->str).rfind("WRONGTYPE", 0) == 0) {
        return Reply{200, {}};  // not a string: no object (the client counts it corrupt)
    }
    if (auto refused = error_reply(r, u, "GET")) {
        return fail(std::move(*refused));
    }
    if (exists->type != REDIS_REPLY_INTEGER || len->type != REDIS_REPLY_INTEGER ||
        r[2]->type != REDIS_REPLY_STRING) {
        return fail(redis_failure(RemoteErrc::transport,
                                  "GET " + name(u) + ": an answer of the wrong type"));
    }
    if (exists->integer == 0) {
        return fail(redis_failure(RemoteErrc::not_found, "GET " + name(u) + ": no such key", 404));
    }
    const auto size = static_cast<std::uint64_t>(len->integer);
    if (size > settings_.max_object_bytes) {
        return fail(redis_failure(RemoteErrc::too_large, "GET " + name(u) + ": a value of " +
                                                             std::to_string(size) +
                                                             " bytes, over the size cap"));
    }
    const std::uint64_t chunk = first_chunk();
    const redisReply* head = r[2].get();
    store::Bytes body(head->len);  // one memcpy, not a copy char by char
    std::memcpy(body.data(), head->str, head->len);
    if (size > chunk && body.size() == chunk) {
        auto rest =
            ask(u, "GET", {{"GETRANGE", u.key, std::to_string(chunk), std::to_string(size - 1)}});
        if (!rest) {
            return fail(rest.error());
        }
        body.insert(body.end(), (*rest)[0]->str, (*rest)[0]->str + (*rest)[0]->len);
    }
    return Reply{200, std::move(body)};
}

Result<Reply, Failure> RedisBackend::head(const std::string& url) {
    return on_key(url, "HEAD", "EXISTS", 200);
}

RedisCommand RedisBackend::set_command(const RedisUrl& u, std::span<const std::uint8_t> object,
                                       const std::string& ttl) const {
    const std::string_view value(reinterpret_cast<const char*>(object.data()), object.size());
    RedisCommand set{"SET", u.key, value};
    if (settings_.ttl.count() > 0) {
        set.insert(set.end(), {"PX", ttl});
    }
    return set;
}

Result<Reply, Failure> RedisBackend::put(const std::string& url,
                                         std::span<const std::uint8_t> object) {
    auto u = target(url);
    if (!u) {
        return fail(u.error());
    }
    const std::string ttl = std::to_string(settings_.ttl.count());
    auto r = ask(*u, "PUT", {set_command(*u, object, ttl)});
    return r ? Result<Reply, Failure>(Reply{201, {}}) : fail(r.error());
}

Result<Reply, Failure> RedisBackend::remove(const std::string& url) {
    return on_key(url, "DELETE", "DEL", 204);
}

bool RedisBackend::warm_up(const std::string& url, const std::atomic<bool>& stop) {
    auto u = target(url);
    if (!u) {
        return false;
    }
    if (u->mode != RedisMode::cluster) {
        return pool_.prime(u->nodes.front(), login(*u), u->server);
    }
    SlotMap& map = map_of(*u);
    if (map.masters().empty() && !load_map(map, *u)) {
        return false;  // the first request asks again
    }
    bool all = true;
    for (const RedisNode& node : map.masters()) {
        if (stop.load()) {
            return false;
        }
        all = pool_.prime(node, login(*u), u->server) && all;
    }
    return all;
}

Result<RedisUrl, Failure> RedisBackend::target(const std::string& url) const {
    auto u = parse_redis_url(url);
    if (!u) {
        return fail(redis_failure(RemoteErrc::config, "remote URL: " + u.error()));
    }
    if (u->tls) {
        return fail(redis_failure(RemoteErrc::config, kNoRedisTls));
    }
    return std::move(*u);
}

RedisLogin RedisBackend::login(const RedisUrl& u) const {
    std::string password = u.password;
    if (!u.has_password && credential_->configured()) {
        auto secret = credential_->current();
        if (secret) {
            password = std::move(*secret);
        } else {
            logging::warning(secret.error().message);  // the server will answer NOAUTH
        }
    }
    return RedisLogin{u.user, std::move(password), u.db, settings_.connect_timeout,
                      settings_.timeout};
}

Result<RedisReplies, Failure> RedisBackend::exchange(const RedisNode& node, const RedisUrl& u,
                                                     const std::vector<RedisCommand>& commands) {
    const RedisLogin l = login(u);
    auto r = redis_exchange(pool_, node, l, u.server, commands);
    if (!r && r.error().status == 401 && !u.has_password && credential_->configured() &&
        credential_->refresh(l.password)) {
        return redis_exchange(pool_, node, login(u), u.server, commands);
    }
    return r;
}

std::optional<Failure> RedisBackend::error_reply(std::span<const RedisReplyPtr> replies,
                                                 const RedisUrl& u, const char* what) {
    for (const RedisReplyPtr& r : replies) {
        if (r->type == REDIS_REPLY_ERROR) {
            const std::string text(r->str, r->len);
            return redis_failure(RemoteErrc::http_status,
                                 std::string(what) + " " + name(u) + ": " + text,
                                 redis_error_status(text));
        }
    }
    return std::nullopt;
}

Result<RedisReplies, Failure> RedisBackend::ask(const RedisUrl& u, const char* what,
                                                const std::vector<RedisCommand>& commands) {
    auto r = run(u, what, commands);
    if (!r) {
        return r;
    }
    if (auto refused = error_reply(*r, u, what)) {
        return fail(std::move(*refused));
    }
    return r;
}

Result<Reply, Failure> RedisBackend::on_key(const std::string& url, const char* what,
                                            const char* command, long status) {
    auto u = target(url);
    if (!u) {
        return fail(u.error());
    }
    auto r = ask(*u, what, {{command, u->key}});
    if (!r) {
        return fail(r.error());
    }
    if ((*r)[0]->integer == 0) {
        return fail(redis_failure(RemoteErrc::not_found,
                                  std::string(what) + " " + name(*u) + ": no such key", 404));
    }
    return Reply{status, {}};
}

Result<RedisReplies, Failure> RedisBackend::run(const RedisUrl& u, const char* what,
                                                const std::vector<RedisCommand>& commands) {
    auto r = u.mode == RedisMode::cluster ? run_cluster(u, commands)
                                          : exchange(u.nodes.front(), u, commands);
    if (!r) {
        Failure f = r.error();
        f.error.message = std::string(what) + " " + name(u) + ": " + f.error.message;
        return fail(std::move(f));
    }
    return r;
}

namespace {

// A config error when the Redis URL `url` cannot be served or would send a
// password in clear that `settings` does not allow. Names no credentials.
Status<RemoteError> check_redis_url(const std::string& url, const Settings& settings) {
    auto u = parse_redis_url(url);
    if (!u) {
        return fail(
            RemoteError{RemoteErrc::config,
                        "remote URL " + url.substr(0, url.find("://") + 3) + "…: " + u.error()});
    }
    if (u->tls) {
        return fail(RemoteError{RemoteErrc::config, kNoRedisTls});
    }
    const bool password =
        u->has_password || !settings.token_file.empty() || !settings.token_command.empty();
    if (password && settings.plain_http_token == PlainHttpToken::refuse) {
        return fail(RemoteError{RemoteErrc::config,
                                "a password (in the URL, KCACHE_REMOTE_TOKEN_FILE or "
                                "KCACHE_REMOTE_TOKEN_COMMAND) is never sent over a link "
                                "without TLS such as " +
                                    u->server +
                                    ": reach Redis through a TLS tunnel, or allow it explicitly "
                                    "(KCACHE_REMOTE_ALLOW_HTTP_TOKEN=1)"});
    }
    return Ok{};
}

}  // namespace

Result<std::string, RemoteError> redis_origin(const std::string& url, const Settings& settings) {
    if (auto ok = check_redis_url(url, settings); !ok) {
        return fail(ok.error());
    }
    const RedisUrl u = *parse_redis_url(url);
    std::string out = u.mode == RedisMode::cluster ? "Redis Cluster " : "Redis ";
    out += u.server + " (hiredis " + std::to_string(HIREDIS_MAJOR) + "." +
           std::to_string(HIREDIS_MINOR) + "." + std::to_string(HIREDIS_PATCH) + ")";
    out += u.key.empty() ? ", no key prefix" : ", key prefix \"" + u.key + "/\"";
    out += ", user " + (u.user.empty() ? std::string("default") : u.user);
    out += u.has_password ? ", password from the URL"
           : !settings.token_file.empty()
               ? ", password from " + settings.token_file.string() +
                     " (KCACHE_REMOTE_TOKEN_FILE, read again when it changes)"
           : !settings.token_command.empty()
               ? ", password from the token command (KCACHE_REMOTE_TOKEN_COMMAND)"
               : ", no password (no AUTH)";
    out += settings.ttl.count() == 0 ? "; objects never expire"
                                     : "; objects expire " + std::to_string(settings.ttl.count()) +
                                           " ms after upload (KCACHE_REMOTE_TTL)";
    return out;
}

Result<std::unique_ptr<Backend>, RemoteError> make_redis(
    const Settings& settings, const std::shared_ptr<Credential>& credential) {
    for (const std::string& url : settings.base_urls) {
        if (url.rfind("redis", 0) == 0) {
            if (auto ok = check_redis_url(url, settings); !ok) {
                return fail(ok.error());
            }
        }
    }
    return std::unique_ptr<Backend>(std::make_unique<RedisBackend>(settings, credential));
}

}  // namespace kcache::remote
