#pragma once
// Redis base and object URLs. Internal.
//
//   url      := scheme "://" [userinfo "@"] nodes ["/" path]
//   scheme   := "redis" | "rediss" | "redis+cluster"
//   userinfo := [user] [":" password]          ; %XX-escaped
//   nodes    := node ("," node)*                ; several only for redis+cluster (seeds)
//   node     := host [":" port]                 ; port 6379 by default
//   path     := [db "/"] key                    ; db: decimal, the first segment when all
//                                               ; digits (0 for redis+cluster); key: the rest
//
// The key of an object URL is the base URL's path (the key prefix) followed
// by the object's path, "kcache/v1/<2 hex>/<64 hex>".

#include <string>
#include <vector>

#include "kcache/common/result.hpp"

namespace kcache::remote {

enum class RedisMode { single, cluster };

struct RedisNode {
    std::string host;
    int port = 6379;
    bool operator==(const RedisNode&) const = default;
};

// "host:port" ("[v6]:port" for an IPv6 address).
std::string to_string(const RedisNode& node);

struct RedisUrl {
    RedisMode mode = RedisMode::single;
    bool tls = false;              // rediss://
    std::vector<RedisNode> nodes;  // the server; for a cluster the seeds
    std::string user;              // ACL user; empty: "default"
    std::string password;          // empty: none in the URL
    bool has_password = false;
    int db = 0;
    std::string key;     // the Redis key (prefix and object path)
    std::string server;  // scheme://nodes[/db]: names the server in messages, never credentials
};

// Parses `url`; what is wrong otherwise (never quoting a password).
Result<RedisUrl, std::string> parse_redis_url(const std::string& url);

}  // namespace kcache::remote
