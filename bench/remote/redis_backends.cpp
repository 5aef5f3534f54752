#include "redis_backends.hpp"

#include <iostream>
#include <memory>

#include "redis_server.hpp"

namespace kcache::bench {
namespace {

template <typename Server>
std::optional<Remote> kept(const char* name, Result<Server, std::string> s, std::string url) {
    if (!s) {
        std::cerr << name << " did not start: " << s.error() << "\n";
        return std::nullopt;
    }
    return Remote{name, {"KCACHE_REMOTE=" + url}, std::make_shared<Server>(std::move(*s)), {}};
}

}  // namespace

std::optional<Remote> start_redis(const std::filesystem::path& dir) {
    auto s = test::RedisServer::start(dir);
    const std::string url = s ? s->url() : "";
    return kept("Redis", std::move(s), url);
}

std::vector<std::string> hanging_redis(const std::string& host_port) {
    return {"KCACHE_REMOTE=redis://" + host_port};
}

std::optional<Remote> start_redis_cluster(const std::filesystem::path& dir) {
    auto c = test::RedisCluster::start(dir);
    const std::string url = c ? c->url() : "";
    return kept("Redis Cluster", std::move(c), url);
}

std::vector<std::string> hanging_redis_cluster(const std::string& host_port) {
    return {"KCACHE_REMOTE=redis+cluster://" + host_port};
}

}  // namespace kcache::bench
