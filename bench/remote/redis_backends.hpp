#pragma once
// The Redis rows of the remote benchmark (remote_backends.cpp): one
// redis-server, and a cluster of 3 masters and 3 replicas, started on
// loopback by tests/harness/redis_server.hpp.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "remote_backends.hpp"

namespace kcache::bench {

std::optional<Remote> start_redis(const std::filesystem::path& dir);
std::vector<std::string> hanging_redis(const std::string& host_port);
std::optional<Remote> start_redis_cluster(const std::filesystem::path& dir);
std::vector<std::string> hanging_redis_cluster(const std::string& host_port);

}  // namespace kcache::bench
