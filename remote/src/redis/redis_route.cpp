// Redis Cluster routing and batches of the Redis backend
// (redis_backend.hpp): the node a key's slot lives on, redirects, and
// get_many / put_many pipelined per server or node.
//
//   batch := per server or node: the commands of every URL it serves, one
//            exchange (a get: EXISTS, STRLEN, GETRANGE; a put: SET), the
//            replies in order; a URL whose replies redirect is sent alone

#include <algorithm>
#include <functional>

#include "redis_backend.hpp"

namespace kcache::remote {
namespace {

// Redirects one cluster request follows (MOVED and ASK together).
constexpr int kMaxRedirects = 5;

// Whether any of `replies` is a MOVED or ASK.
bool redirected(std::span<const RedisReplyPtr> replies) {
    return std::any_of(replies.begin(), replies.end(), [](const RedisReplyPtr& r) {
        return r->type == REDIS_REPLY_ERROR &&
               parse_redirect(std::string_view(r->str, r->len), RedisNode{}).has_value();
    });
}

}  // namespace

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
        auto r = exchange(node, u, {{"CLUSTER", "SLOTS"}});
        if (r && (*r)[0]->type == REDIS_REPLY_ERROR) {
            const std::string text((*r)[0]->str, (*r)[0]->len);
            return fail(redis_failure(RemoteErrc::http_status,
                                      "CLUSTER SLOTS refused by " + to_string(node) + ": " + text,
                                      redis_error_status(text)));
        }
        auto ranges = r ? parse_cluster_slots((*r)[0].get(), node)
                        : Result<std::vector<SlotRange>, std::string>(fail(std::string()));
        if (r && ranges) {
            map.load(*ranges);
            return Ok{};
        }
        last = r ? redis_failure(RemoteErrc::transport,
                                 "CLUSTER SLOTS of " + to_string(node) + ": " + ranges.error())
                 : r.error();
        map.failed(node);
        if (!r && r.error().error.code == RemoteErrc::timeout) {
            break;
        }
    }
    return fail(
        last ? std::move(*last)
             : redis_failure(RemoteErrc::unreachable, "no cluster node to ask for its slots"));
}

Result<RedisReplies, Failure> RedisBackend::run_cluster(const RedisUrl& u,
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
                return fail(redis_failure(RemoteErrc::http_status,
                                          "slot " + std::to_string(slot) + " is served by no node",
                                          503));
            }
        }
        std::vector<RedisCommand> sent;
        for (const RedisCommand& c : commands) {
            if (asking) {
                sent.push_back({"ASKING"});
            }
            sent.push_back(c);
        }
        auto r = exchange(*node, u, sent);
        if (!r) {
            map.failed(*node);
            return fail(r.error());
        }
        RedisReplies replies;
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
    return fail(redis_failure(RemoteErrc::redirects, "more than " + std::to_string(kMaxRedirects) +
                                                         " MOVED/ASK redirects for slot " +
                                                         std::to_string(slot)));
}

std::string RedisBackend::server_of(const std::string& url) {
    auto u = parse_redis_url(url);
    if (!u || u->mode != RedisMode::cluster) {
        return server_name(url);
    }
    const std::optional<RedisNode> node = map_of(*u).last_known(key_slot(u->key));
    return node ? "redis://" + to_string(*node) : server_name(url);
}

struct RedisBackend::Batch {
    const char* what;  // "GET", "PUT"
    std::vector<std::string> urls;
    std::size_t per_url;  // commands per URL
    // The commands of URL `i` (parsed as `u`).
    std::function<std::vector<RedisCommand>(std::size_t i, const RedisUrl& u)> commands;
    // The reply of URL `i` from its replies.
    std::function<Result<Reply, Failure>(std::size_t i, const RedisUrl& u,
                                         std::span<RedisReplyPtr> replies)>
        answer;
    // URL `i` alone (after a redirect).
    std::function<Result<Reply, Failure>(std::size_t i)> alone;
};

// The URLs of a batch that go to one server or node, in one exchange.
struct RedisBackend::BatchGroup {
    RedisNode node;
    RedisUrl first;  // whose login and server the exchange uses
    std::vector<std::pair<std::size_t, RedisUrl>> members;
};

std::map<std::string, RedisBackend::BatchGroup> RedisBackend::group_batch(Batch& batch,
                                                                          BatchAnswers& out) {
    std::map<std::string, BatchGroup> groups;
    std::map<SlotMap*, Failure> unloaded;  // a cluster whose map could not be loaded: asked once
    for (std::size_t i = 0; i < batch.urls.size(); ++i) {
        auto u = target(batch.urls[i]);
        if (!u) {
            out[i] = fail(u.error());
            continue;
        }
        std::optional<RedisNode> node = u->nodes.front();
        if (u->mode == RedisMode::cluster) {
            SlotMap& map = map_of(*u);
            node = map.node_for(key_slot(u->key));
            if (!node && !unloaded.contains(&map)) {
                if (auto loaded = load_map(map, *u); !loaded) {
                    unloaded.emplace(&map, loaded.error());
                }
                node = map.node_for(key_slot(u->key));
            }
            if (!node && unloaded.contains(&map)) {
                out[i] = fail(unloaded.at(&map));
                continue;
            }
        }
        if (!node) {  // a slot no node serves: alone, which says so
            out[i] = batch.alone(i);
            continue;
        }
        const RedisLogin l = login(*u);
        BatchGroup& g =
            groups[u->server + "\n" + l.user + "\n" + l.password + "\n" + to_string(*node)];
        if (g.members.empty()) {
            g.node = *node;
            g.first = *u;
        }
        g.members.emplace_back(i, std::move(*u));
    }
    return groups;
}

void RedisBackend::send_group(Batch& batch, const BatchGroup& g, BatchAnswers& out) {
    std::vector<RedisCommand> commands;
    for (const auto& [i, u] : g.members) {
        for (RedisCommand& c : batch.commands(i, u)) {
            commands.push_back(std::move(c));
        }
    }
    auto r = exchange(g.node, g.first, commands);
    if (!r && g.first.mode == RedisMode::cluster) {
        map_of(g.first).failed(g.node);
    }
    for (std::size_t k = 0; k < g.members.size(); ++k) {
        const auto& [i, u] = g.members[k];
        if (!r) {
            Failure f = r.error();
            f.error.message = std::string(batch.what) + " " + name(u) + ": " + f.error.message;
            out[i] = fail(std::move(f));
            continue;
        }
        const std::span<RedisReplyPtr> mine(r->data() + k * batch.per_url, batch.per_url);
        out[i] = redirected(mine) ? batch.alone(i) : batch.answer(i, u, mine);
    }
}

std::vector<Result<Reply, Failure>> RedisBackend::run_batch(Batch& batch) {
    BatchAnswers out(batch.urls.size());
    for (const auto& [id, g] : group_batch(batch, out)) {
        send_group(batch, g, out);
    }
    std::vector<Result<Reply, Failure>> answers;
    for (auto& o : out) {
        answers.push_back(std::move(*o));
    }
    return answers;
}

std::vector<Result<Reply, Failure>> RedisBackend::get_many(const std::vector<std::string>& urls) {
    const std::string last = std::to_string(first_chunk() - 1);
    Batch b{"GET", urls, 3, {}, {}, {}};
    b.commands = [&](std::size_t, const RedisUrl& u) { return get_commands(u, last); };
    b.answer = [&](std::size_t, const RedisUrl& u, std::span<RedisReplyPtr> r) {
        return get_answer(u, r);
    };
    b.alone = [&](std::size_t i) { return get(urls[i]); };
    return run_batch(b);
}

std::vector<Result<Reply, Failure>> RedisBackend::put_many(const std::vector<PutItem>& items) {
    const std::string ttl = std::to_string(settings_.ttl.count());
    std::vector<std::string> urls;
    for (const PutItem& item : items) {
        urls.push_back(item.url);
    }
    Batch b{"PUT", urls, 1, {}, {}, {}};
    b.commands = [&](std::size_t i, const RedisUrl& u) {
        return std::vector<RedisCommand>{set_command(u, items[i].object, ttl)};
    };
    b.answer = [&](std::size_t, const RedisUrl& u,
                   std::span<RedisReplyPtr> r) -> Result<Reply, Failure> {
        if (auto refused = error_reply(r, u, "PUT")) {
            return fail(std::move(*refused));
        }
        return Reply{201, {}};
    };
    b.alone = [&](std::size_t i) { return put(items[i].url, items[i].object); };
    return run_batch(b);
}

}  // namespace kcache::remote
