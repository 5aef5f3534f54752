#include "redis_server.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "nginx_server.hpp"

namespace kcache::test {
namespace {

// How long a cluster node may go silent before its replica takes over.
constexpr int kNodeTimeoutMs = 1000;

void write_conf(const std::filesystem::path& dir, int port, int bus_port, const RedisOptions& o) {
    const std::string d = dir.string();
    std::ofstream conf(dir / "redis.conf", std::ios::trunc);
    conf << "port " << port << "\nbind 127.0.0.1\ndir \"" << d << "\"\ndaemonize no\n"
         << "save \"\"\nappendonly no\nlogfile \"" << d << "/redis.log\"\n";
    if (o.cluster) {
        conf << "cluster-enabled yes\ncluster-config-file \"" << d << "/nodes.conf\"\n"
             << "cluster-node-timeout " << kNodeTimeoutMs << "\ncluster-port " << bus_port
             << "\ncluster-replica-validity-factor 0\n";
    }
    for (const std::string& line : o.config) {
        conf << line << "\n";
    }
}

}  // namespace

Result<std::string, std::string> run_program(const std::vector<std::string>& argv) {
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) {
        return fail(std::string("pipe failed"));
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(out[1], 1);
        ::dup2(out[1], 2);
        std::vector<char*> args;
        for (const std::string& a : argv) {
            args.push_back(const_cast<char*>(a.c_str()));
        }
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    ::close(out[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) {
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(out[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return fail(argv[0] + " exited with " + std::to_string(WEXITSTATUS(status)) + ": " + text);
    }
    return text;
}

Result<RedisServer, std::string> RedisServer::start(const std::filesystem::path& dir,
                                                    const RedisOptions& options) {
    std::filesystem::create_directories(dir);
    RedisServer s;
    s.dir_ = dir;
    s.options_ = options;
    if (start_on_free_port([&](int port) {
            s.port_ = port;
            write_conf(dir, port, free_port(), options);
            return s.launch();
        })) {
        return s;
    }
    return fail(did_not_start("redis-server", dir, {"redis.log", "stderr.log"}));
}

bool RedisServer::launch() {
    const std::string conf = (dir_ / "redis.conf").string();
    const std::string err = (dir_ / "stderr.log").string();
    pid_ = ::fork();
    if (pid_ == 0) {
        if (std::FILE* f = std::freopen(err.c_str(), "w", stderr); f == nullptr) {
            ::_exit(126);
        }
        ::execlp("redis-server", "redis-server", conf.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    return wait_listening(pid_, port_);
}

RedisServer::RedisServer(RedisServer&& o) noexcept
    : dir_(std::move(o.dir_)),
      options_(std::move(o.options_)),
      port_(o.port_),
      pid_(std::exchange(o.pid_, -1)) {}

RedisServer::~RedisServer() {
    stop();
}

std::string RedisServer::url() const {
    return "redis://" + address();
}

std::string RedisServer::address() const {
    return "127.0.0.1:" + std::to_string(port_);
}

Result<std::string, std::string> RedisServer::cli(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{"redis-cli", "-h", "127.0.0.1", "-p", std::to_string(port_)};
    if (!options_.cli_user.empty()) {
        argv.insert(argv.end(), {"--user", options_.cli_user, "--pass", options_.cli_password,
                                 "--no-auth-warning"});
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return run_program(argv);
}

void RedisServer::stop() {
    stop_process(pid_);
}

void RedisServer::kill() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }
}

bool RedisServer::restart() {
    return pid_ <= 0 && launch();
}

Result<RedisCluster, std::string> RedisCluster::start(const std::filesystem::path& dir) {
    RedisCluster c;
    std::vector<std::string> create{"redis-cli", "--cluster", "create"};
    for (int i = 0; i < 6; ++i) {
        RedisOptions o;
        o.cluster = true;
        auto s = RedisServer::start(dir / ("node" + std::to_string(i)), o);
        if (!s) {
            return fail(s.error());
        }
        create.push_back(s->address());
        c.servers_.push_back(std::move(*s));
    }
    create.insert(create.end(), {"--cluster-replicas", "1", "--cluster-yes"});
    if (auto made = run_program(create); !made) {
        return fail("redis-cli --cluster create failed: " + made.error());
    }
    if (!c.wait_ok(20)) {
        return fail("the cluster in " + dir.string() + " did not come up");
    }
    return c;
}

std::string RedisCluster::url() const {
    return "redis+cluster://" + servers_[0].address() + "," + servers_[1].address();
}

RedisServer* RedisCluster::server_at(const std::string& address) {
    for (RedisServer& s : servers_) {
        if (s.pid() > 0 && s.address() == address) {
            return &s;
        }
    }
    return nullptr;
}

Result<std::vector<ClusterNode>, std::string> RedisCluster::nodes() {
    std::string why = "no live node";
    for (RedisServer& s : servers_) {
        if (s.pid() <= 0) {
            continue;
        }
        auto text = s.cli({"CLUSTER", "NODES"});
        if (!text) {
            why = text.error();
            continue;
        }
        // <id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch> <link> <slot>…
        std::vector<ClusterNode> out;
        std::istringstream lines(*text);
        for (std::string line; std::getline(lines, line);) {
            std::istringstream words(line);
            ClusterNode n;
            std::string addr, flags, skip;
            if (!(words >> n.id >> addr >> flags >> skip >> skip >> skip >> skip >> skip)) {
                continue;
            }
            n.address = addr.substr(0, addr.find('@'));
            n.master = flags.find("master") != std::string::npos;
            n.failed = flags.find("fail") != std::string::npos;
            for (std::string range; words >> range;) {
                if (range.front() == '[') {
                    continue;  // a slot being migrated or imported
                }
                const auto dash = range.find('-');
                const int first = std::stoi(range.substr(0, dash));
                const int last =
                    dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
                n.slots.emplace_back(first, last);
            }
            out.push_back(std::move(n));
        }
        return out;
    }
    return fail(why);
}

Result<ClusterNode, std::string> RedisCluster::master_of(int slot) {
    auto all = nodes();
    if (!all) {
        return fail(all.error());
    }
    for (const ClusterNode& n : *all) {
        for (const auto& [first, last] : n.slots) {
            if (n.master && !n.failed && slot >= first && slot <= last) {
                return n;
            }
        }
    }
    return fail("no master serves slot " + std::to_string(slot));
}

bool RedisCluster::wait_ok(int seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (std::chrono::steady_clock::now() < until) {
        int covered = 0;
        bool ok = true;
        for (RedisServer& s : servers_) {
            if (s.pid() > 0) {
                auto info = s.cli({"CLUSTER", "INFO"});
                ok = ok && info && info->find("cluster_state:ok") != std::string::npos;
                auto role = s.cli({"INFO", "replication"});  // a replica in sync with its master
                ok = ok && role &&
                     (role->find("role:slave") == std::string::npos ||
                      role->find("master_link_status:up") != std::string::npos);
            }
        }
        if (auto all = nodes(); ok && all) {
            for (const ClusterNode& n : *all) {
                for (const auto& [first, last] : n.slots) {
                    covered += n.master && !n.failed && server_at(n.address) ? last - first + 1 : 0;
                }
            }
        }
        if (ok && covered == 16384) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

}  // namespace kcache::test
