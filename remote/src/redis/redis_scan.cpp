// The Redis listing of a namespace (Backend::list, listing.hpp):
//
//   page := SCAN cursor MATCH <escaped key prefix>* COUNT 1000   → [cursor, [key…]]
//   age  := OBJECT IDLETIME key   (pipelined, one per object of the page)
//
// until the cursor is 0 again. Redis keeps no time of a key's write, so the
// age is the time since the object was last read or written (OBJECT
// IDLETIME, which does not itself touch it): gc removes what nobody used
// for that long. A key gone between SCAN and IDLETIME (nil) is left out.
// One server only: a cluster's keys are spread over its masters, each of
// which is listed by naming it as a redis:// URL.

#include "listing.hpp"
#include "redis_backend.hpp"

namespace kcache::remote {
namespace {

// `key` with SCAN MATCH's special characters escaped.
std::string glob_escaped(const std::string& key) {
    std::string out;
    for (char c : key) {
        if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out;
}

bool is_string(const redisReply* r) {
    return r != nullptr && (r->type == REDIS_REPLY_STRING || r->type == REDIS_REPLY_STATUS);
}

}  // namespace

Result<std::vector<ListedObject>, Failure> RedisBackend::list(const std::string& dir) {
    auto u = target(dir);
    if (!u) {
        return fail(u.error());
    }
    if (u->mode == RedisMode::cluster) {
        return fail(redis_failure(
            RemoteErrc::config,
            "listing " + u->server +
                ": a Redis Cluster is listed master by master: name each master as a "
                "redis://host:port/prefix URL (KCACHE_REMOTE) and run gc once per master"));
    }
    const std::string prefix = u->key;
    const std::string pattern = glob_escaped(prefix) + "*";
    std::vector<ListedObject> out;
    std::string cursor = "0";
    do {
        auto page = ask(*u, "SCAN", {{"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}});
        if (!page) {
            return fail(page.error());
        }
        const redisReply* r = (*page)[0].get();
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 || !is_string(r->element[0]) ||
            r->element[1]->type != REDIS_REPLY_ARRAY) {
            return fail(redis_failure(RemoteErrc::corrupt,
                                      "SCAN " + name(*u) + ": an answer of the wrong shape"));
        }
        cursor.assign(r->element[0]->str, r->element[0]->len);
        std::vector<std::string> names;  // below `prefix`, kept alive for `idle`
        for (std::size_t i = 0; i < r->element[1]->elements; ++i) {
            const redisReply* k = r->element[1]->element[i];
            const std::string key = is_string(k) ? std::string(k->str, k->len) : "";
            if (key.compare(0, prefix.size(), prefix) == 0 &&
                object_name(std::string_view(key).substr(prefix.size()))) {
                names.push_back(key);
            }
        }
        std::vector<RedisCommand> idle;
        for (const std::string& key : names) {
            idle.push_back({"OBJECT", "IDLETIME", key});
        }
        auto ages = idle.empty() ? Result<RedisReplies, Failure>(RedisReplies{})
                                 : ask(*u, "OBJECT IDLETIME", idle);
        if (!ages) {
            return fail(ages.error());
        }
        for (std::size_t i = 0; i < names.size(); ++i) {
            const redisReply* a = (*ages)[i].get();
            if (a->type == REDIS_REPLY_INTEGER && a->integer >= 0) {
                out.push_back({names[i].substr(prefix.size()), std::chrono::seconds(a->integer)});
            }
        }
    } while (cursor != "0");
    return out;
}

}  // namespace kcache::remote
