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
// the server closed is replaced and the request sent once more.

#include <algorithm>
#include <map>

#include "redis_cluster.hpp"
#include "redis_conn.hpp"

namespace kcache::remote {
namespace {

// A get reads objects up to this size in its first round trip.
constexpr std::uint64_t kFirstChunk = 1 << 20;
// Redirects one cluster request follows (MOVED and ASK together).
constexpr int kMaxRedirects = 5;

using Replies = std::vector<RedisReplyPtr>;

constexpr const char* kNoRedisTls =
    "rediss:// (Redis over TLS) is not supported: this build's hiredis (0.14) has no TLS; use "
    "redis:// on a trusted network or through a TLS tunnel (stunnel, spiped)";

Failure failure(RemoteErrc code, std::string message, long status = 0) {
    return Failure{RemoteError{code, std::move(message)}, status};
}

class RedisBackend final : public Backend {
  public:
    RedisBackend(const Settings& settings, std::string token)
        : settings_(settings), token_(std::move(token)) {}

    Result<Reply, Failure> get(const std::string& url) override {
        auto u = target(url);
        if (!u) {
            return fail(u.error());
        }
        const std::uint64_t chunk = std::min(kFirstChunk, settings_.max_object_bytes);
        const std::string last = std::to_string(chunk - 1);
        auto r = run(*u, "GET",
                     {{"EXISTS", u->key}, {"STRLEN", u->key}, {"GETRANGE", u->key, "0", last}});
        if (!r) {
            return fail(r.error());
        }
        const redisReply* exists = (*r)[0].get();
        const redisReply* len = (*r)[1].get();
        if (len->type == REDIS_REPLY_ERROR &&
            std::string_view(len->str).rfind("WRONGTYPE", 0) == 0) {
            return Reply{200, {}};  // not a string: no object (the client counts it corrupt)
        }
        if (auto refused = error_reply(*r, *u, "GET")) {
            return fail(std::move(*refused));
        }
        if (exists->integer == 0) {
            return fail(failure(RemoteErrc::not_found, "GET " + name(*u) + ": no such key", 404));
        }
        const auto size = static_cast<std::uint64_t>(len->integer);
        if (size > settings_.max_object_bytes) {
            return fail(failure(RemoteErrc::too_large, "GET " + name(*u) + ": a value of " +
                                                           std::to_string(size) +
                                                           " bytes, over the size cap"));
        }
        const redisReply* head = (*r)[2].get();
        store::Bytes body(head->str, head->str + head->len);
        if (size > chunk && body.size() == chunk) {
            auto rest = ask(
                *u, "GET", {{"GETRANGE", u->key, std::to_string(chunk), std::to_string(size - 1)}});
            if (!rest) {
                return fail(rest.error());
            }
            body.insert(body.end(), (*rest)[0]->str, (*rest)[0]->str + (*rest)[0]->len);
        }
        return Reply{200, std::move(body)};
    }

    Result<Reply, Failure> head(const std::string& url) override {
        return on_key(url, "HEAD", "EXISTS", 200);
    }

    Result<Reply, Failure> put(const std::string& url,
                               std::span<const std::uint8_t> object) override {
        auto u = target(url);
        if (!u) {
            return fail(u.error());
        }
        const std::string_view value(reinterpret_cast<const char*>(object.data()), object.size());
        const std::string ttl = std::to_string(settings_.ttl.count());
        RedisCommand set{"SET", u->key, value};
        if (settings_.ttl.count() > 0) {
            set.insert(set.end(), {"PX", ttl});
        }
        auto r = ask(*u, "PUT", {set});
        return r ? Result<Reply, Failure>(Reply{201, {}}) : fail(r.error());
    }

    Result<Reply, Failure> remove(const std::string& url) override {
        return on_key(url, "DELETE", "DEL", 204);
    }

  private:
    // The parsed object URL; a config failure when it is not one this backend serves.
    Result<RedisUrl, Failure> target(const std::string& url) const {
        auto u = parse_redis_url(url);
        if (!u) {
            return fail(failure(RemoteErrc::config, "remote URL: " + u.error()));
        }
        if (u->tls) {
            return fail(failure(RemoteErrc::config, kNoRedisTls));
        }
        return std::move(*u);
    }

    static std::string name(const RedisUrl& u) { return u.server + "/" + u.key; }

    RedisLogin login(const RedisUrl& u) const {
        return RedisLogin{u.user, u.has_password ? u.password : token_, u.db,
                          settings_.connect_timeout, settings_.timeout};
    }

    // The first error reply of `replies` as a failure with its status; nullopt when none.
    static std::optional<Failure> error_reply(const Replies& replies, const RedisUrl& u,
                                              const char* what) {
        for (const RedisReplyPtr& r : replies) {
            if (r->type == REDIS_REPLY_ERROR) {
                const std::string text(r->str, r->len);
                return failure(RemoteErrc::http_status,
                               std::string(what) + " " + name(u) + ": " + text,
                               redis_error_status(text));
            }
        }
        return std::nullopt;
    }

    // `commands` through run(), an error reply among the answers a failure.
    Result<Replies, Failure> ask(const RedisUrl& u, const char* what,
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

    // `command` on the key of `url`, whose integer answer 0 means no such key;
    // a reply of `status` otherwise.
    Result<Reply, Failure> on_key(const std::string& url, const char* what, const char* command,
                                  long status) {
        auto u = target(url);
        if (!u) {
            return fail(u.error());
        }
        auto r = ask(*u, what, {{command, u->key}});
        if (!r) {
            return fail(r.error());
        }
        if ((*r)[0]->integer == 0) {
            return fail(failure(RemoteErrc::not_found,
                                std::string(what) + " " + name(*u) + ": no such key", 404));
        }
        return Reply{status, {}};
    }

    Result<Replies, Failure> run(const RedisUrl& u, const char* what,
                                 const std::vector<RedisCommand>& commands) {
        auto r = u.mode == RedisMode::cluster
                     ? run_cluster(u, commands)
                     : redis_exchange(pool_, u.nodes.front(), login(u), u.server, commands);
        if (!r) {
            Failure f = r.error();
            f.error.message = std::string(what) + " " + name(u) + ": " + f.error.message;
            return fail(std::move(f));
        }
        return r;
    }

    Result<Replies, Failure> run_cluster(const RedisUrl& u,
                                         const std::vector<RedisCommand>& commands);
    Status<Failure> load_map(SlotMap& map, const RedisUrl& u);
    SlotMap& map_of(const RedisUrl& u);

    const Settings& settings_;
    std::string token_;  // the password when a URL names none
    RedisPool pool_;
    std::mutex mu_;                                         // guards maps_
    std::map<std::string, std::unique_ptr<SlotMap>> maps_;  // by cluster (server and user)
};

SlotMap& RedisBackend::map_of(const RedisUrl& u) {
    std::lock_guard g(mu_);
    auto& map = maps_[u.server + "/" + u.user];
    if (!map) {
        map = std::make_unique<SlotMap>(u.nodes);
    }
    return *map;
}

// Asks the map's candidates for CLUSTER SLOTS until one answers; stops at
// a timeout, so that one request pays at most one.
Status<Failure> RedisBackend::load_map(SlotMap& map, const RedisUrl& u) {
    std::optional<Failure> last;
    for (const RedisNode& node : map.candidates()) {
        auto r = redis_exchange(pool_, node, login(u), u.server, {{"CLUSTER", "SLOTS"}});
        if (r && (*r)[0]->type == REDIS_REPLY_ERROR) {
            const std::string text((*r)[0]->str, (*r)[0]->len);
            return fail(failure(RemoteErrc::http_status,
                                "CLUSTER SLOTS refused by " + to_string(node) + ": " + text,
                                redis_error_status(text)));
        }
        auto ranges = r ? parse_cluster_slots((*r)[0].get(), node)
                        : Result<std::vector<SlotRange>, std::string>(fail(std::string()));
        if (r && ranges) {
            map.load(*ranges);
            return Ok{};
        }
        last = r ? failure(RemoteErrc::transport,
                           "CLUSTER SLOTS of " + to_string(node) + ": " + ranges.error())
                 : r.error();
        map.failed(node);
        if (!r && r.error().error.code == RemoteErrc::timeout) {
            break;
        }
    }
    return fail(last ? std::move(*last)
                     : failure(RemoteErrc::unreachable, "no cluster node to ask for its slots"));
}

Result<Replies, Failure> RedisBackend::run_cluster(const RedisUrl& u,
                                                   const std::vector<RedisCommand>& commands) {
    SlotMap& map = map_of(u);
    const int slot = key_slot(u.key);
    std::optional<RedisNode> next;  // a redirect's target
    bool asking = false;
    for (int hop = 0; hop <= kMaxRedirects; ++hop) {
        std::optional<RedisNode> node = next ? next : map.node_for(slot);
        if (!node) {
            if (auto loaded = load_map(map, u); !loaded) {
                return fail(loaded.error());
            }
            node = map.node_for(slot);
            if (!node) {
                return fail(failure(RemoteErrc::http_status,
                                    "slot " + std::to_string(slot) + " is served by no node", 503));
            }
        }
        std::vector<RedisCommand> sent;
        for (const RedisCommand& c : commands) {
            if (asking) {
                sent.push_back({"ASKING"});
            }
            sent.push_back(c);
        }
        auto r = redis_exchange(pool_, *node, login(u), u.server, sent);
        if (!r) {
            map.failed(*node);
            return fail(r.error());
        }
        Replies replies;
        for (std::size_t i = asking ? 1 : 0; i < r->size(); i += asking ? 2 : 1) {
            replies.push_back(std::move((*r)[i]));
        }
        std::optional<Redirect> redirect;
        for (const RedisReplyPtr& reply : replies) {
            if (!redirect && reply->type == REDIS_REPLY_ERROR) {
                redirect = parse_redirect(std::string_view(reply->str, reply->len), *node);
            }
        }
        if (!redirect) {
            return replies;
        }
        if (redirect->kind == Redirect::Kind::moved) {
            map.moved(redirect->slot, redirect->node);
        }
        next = redirect->node;
        asking = redirect->kind == Redirect::Kind::ask;
    }
    return fail(failure(RemoteErrc::redirects, "more than " + std::to_string(kMaxRedirects) +
                                                   " MOVED/ASK redirects for slot " +
                                                   std::to_string(slot)));
}

}  // namespace

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
    const bool password = u->has_password || !settings.token_file.empty();
    if (password && settings.plain_http_token == PlainHttpToken::refuse) {
        return fail(RemoteError{
            RemoteErrc::config,
            "a password (in the URL or KCACHE_REMOTE_TOKEN_FILE) is never sent over a link "
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
           : settings.token_file.empty()
               ? ", no password (no AUTH)"
               : ", password from " + settings.token_file.string() + " (KCACHE_REMOTE_TOKEN_FILE)";
    out += settings.ttl.count() == 0 ? "; objects never expire"
                                     : "; objects expire " + std::to_string(settings.ttl.count()) +
                                           " ms after upload (KCACHE_REMOTE_TTL)";
    return out;
}

Result<std::unique_ptr<Backend>, RemoteError> make_redis(const Settings& settings,
                                                         const std::string& token) {
    for (const std::string& url : settings.base_urls) {
        if (url.rfind("redis", 0) == 0) {
            if (auto ok = check_redis_url(url, settings); !ok) {
                return fail(ok.error());
            }
        }
    }
    return std::unique_ptr<Backend>(std::make_unique<RedisBackend>(settings, token));
}

}  // namespace kcache::remote
