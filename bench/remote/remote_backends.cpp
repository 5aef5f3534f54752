#include "remote_backends.hpp"

#include <cstdlib>
#include <iostream>

#include "apache_server.hpp"
#include "nginx_server.hpp"
#include "rclone_server.hpp"
#include "redis_backends.hpp"
#include "s3_server.hpp"

namespace kcache::bench {
namespace {

// A started test server kept alive by a Remote, or nullopt with its error.
template <typename Server>
std::optional<Remote> running(const char* name, Result<Server, std::string> s,
                              std::vector<std::string> env) {
    if (!s) {
        std::cerr << name << " did not start: " << s.error() << "\n";
        return std::nullopt;
    }
    return Remote{name, std::move(env), std::make_shared<Server>(std::move(*s)), {}};
}

std::optional<Remote> start_nginx(const std::filesystem::path& dir) {
    auto s = test::NginxServer::start(dir);
    const std::string url = s ? s->url() : "";
    return running("nginx", std::move(s), {"KCACHE_REMOTE=" + url});
}

std::vector<std::string> hanging_http(const std::string& host_port) {
    return {"KCACHE_REMOTE=http://" + host_port};
}

std::optional<Remote> start_apache(const std::filesystem::path& dir) {
    auto s = test::ApacheServer::start(dir);
    const std::string url = s ? s->url() : "";
    return running("Apache", std::move(s), {"KCACHE_REMOTE=" + url});
}

std::optional<Remote> start_rclone(const std::filesystem::path& dir) {
    auto s = test::RcloneServer::start(dir);
    const std::string url = s ? s->url() : "";
    return running("rclone", std::move(s), {"KCACHE_REMOTE=" + url});
}

// s3rver's account, signed requests, path-style on loopback.
std::vector<std::string> s3_env(const std::string& endpoint, const std::string& bucket) {
    return {"KCACHE_REMOTE=s3://" + bucket + "/bench?endpoint=" + endpoint,
            std::string("AWS_ACCESS_KEY_ID=") + test::S3Server::kAccessKeyId,
            std::string("AWS_SECRET_ACCESS_KEY=") + test::S3Server::kSecret,
            "AWS_SESSION_TOKEN=", "KCACHE_REMOTE_S3_CREDENTIALS_FILE="};
}

std::optional<Remote> start_s3(const std::filesystem::path& dir) {
    auto s = test::S3Server::start(dir);
    std::vector<std::string> env =
        s ? s3_env(s->endpoint(), s->bucket()) : std::vector<std::string>{};
    auto remote = running("S3 (s3rver)", std::move(s), std::move(env));
    if (remote) {
        auto* server = static_cast<test::S3Server*>(remote->server.get());
        remote->server_gets_us = [server] { return server->durations_us("GET"); };
    }
    return remote;
}

std::vector<std::string> hanging_s3(const std::string& host_port) {
    return s3_env("http://" + host_port, "kcache-test");
}

constexpr BenchBackend kBenchBackends[] = {
    {"nginx", start_nginx, hanging_http},
    {"Apache", start_apache, hanging_http},
    {"rclone", start_rclone, hanging_http},  // rclone serve webdav
    {"S3", start_s3, hanging_s3},
    {"Redis", start_redis, hanging_redis},
    {"RedisCluster", start_redis_cluster, hanging_redis_cluster},
};

}  // namespace

std::vector<BenchBackend> bench_backends(const std::string& only) {
    std::vector<BenchBackend> out;
    for (const BenchBackend& b : kBenchBackends) {
        if (only.empty() ||
            ("," + only + ",").find("," + std::string(b.name) + ",") != std::string::npos) {
            out.push_back(b);
        }
    }
    return out;
}

ScopedEnv::ScopedEnv(const std::vector<std::string>& env) {
    for (const std::string& e : env) {
        const std::string name = e.substr(0, e.find('='));
        const char* old = std::getenv(name.c_str());
        old_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
        ::setenv(name.c_str(), e.substr(name.size() + 1).c_str(), 1);
    }
}

ScopedEnv::~ScopedEnv() {
    for (auto it = old_.rbegin(); it != old_.rend(); ++it) {
        it->second ? ::setenv(it->first.c_str(), it->second->c_str(), 1)
                   : ::unsetenv(it->first.c_str());
    }
}

}  // namespace kcache::bench
