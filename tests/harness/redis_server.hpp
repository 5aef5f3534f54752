#pragma once
// Real Redis 7 servers for the remote tier's tests and benchmarks: one
// redis-server started in its own directory on a free loopback port and
// stopped by PID, and a Redis Cluster of 3 masters and 3 replicas made by
// `redis-cli --cluster create`. No GoogleTest here.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"

namespace kcache::test {

struct RedisOptions {
    std::vector<std::string> config;  // extra redis.conf lines ("user kc on >pw …")
    bool cluster = false;             // cluster-enabled, with a short node timeout
    std::string cli_user;             // who redis-cli logs in as (empty: nobody)
    std::string cli_password;
};

class RedisServer {
  public:
    // Starts redis-server in `dir` (config, log, nodes.conf inside); the
    // error names the directory and carries the server's log.
    static Result<RedisServer, std::string> start(const std::filesystem::path& dir,
                                                  const RedisOptions& options = {});
    RedisServer(RedisServer&& o) noexcept;
    RedisServer& operator=(RedisServer&&) = delete;
    RedisServer(const RedisServer&) = delete;
    ~RedisServer();

    // "redis://127.0.0.1:PORT".
    std::string url() const;
    int port() const { return port_; }
    // "127.0.0.1:PORT".
    std::string address() const;
    // redis-cli against this server with `args`: its standard output, or
    // why it failed (exit status and output).
    Result<std::string, std::string> cli(const std::vector<std::string>& args) const;
    // Stops it (SIGTERM, then waits); kill() sends SIGKILL. Both idempotent.
    void stop();
    void kill();
    // Starts it again on the same port and directory (after stop or kill).
    bool restart();
    pid_t pid() const { return pid_; }

  private:
    RedisServer() = default;
    bool launch();
    std::filesystem::path dir_;
    RedisOptions options_;
    int port_ = 0;
    pid_t pid_ = -1;
};

// A node of a cluster as CLUSTER NODES shows it.
struct ClusterNode {
    std::string id;
    std::string address;  // "127.0.0.1:PORT"
    bool master = false;
    bool failed = false;
    std::vector<std::pair<int, int>> slots;  // ranges served (masters)
};

class RedisCluster {
  public:
    // Six servers under `dir` made into 3 masters with one replica each;
    // waits until every node says the cluster is ok.
    static Result<RedisCluster, std::string> start(const std::filesystem::path& dir);

    // "redis+cluster://127.0.0.1:P1,127.0.0.1:P2" (two seeds).
    std::string url() const;
    std::vector<RedisServer>& servers() { return servers_; }
    // The server listening on `address`; nullptr when none.
    RedisServer* server_at(const std::string& address);
    // CLUSTER NODES as seen by a live node.
    Result<std::vector<ClusterNode>, std::string> nodes();
    // The master serving `slot`.
    Result<ClusterNode, std::string> master_of(int slot);
    // Waits up to `seconds` until every live node says cluster_state:ok,
    // every live replica is in sync and every slot has a live master.
    bool wait_ok(int seconds);

  private:
    std::vector<RedisServer> servers_;
};

// Runs `argv` (argv[0] looked up in PATH): its standard output, or why it failed.
Result<std::string, std::string> run_program(const std::vector<std::string>& argv);

}  // namespace kcache::test
