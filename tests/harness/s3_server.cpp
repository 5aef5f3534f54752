#include "s3_server.hpp"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <utility>

#include "nginx_server.hpp"

namespace kcache::test {

S3Server::S3Server(S3Server&& o) noexcept
    : dir_(std::move(o.dir_)),
      options_(std::move(o.options_)),
      port_(o.port_),
      pid_(std::exchange(o.pid_, -1)) {}

S3Server::~S3Server() {
    stop();
}

Result<S3Server, std::string> S3Server::start(const std::filesystem::path& dir,
                                              const S3Options& options) {
    const std::filesystem::path package = KCACHE_S3RVER_PACKAGE;
    if (!std::filesystem::exists(package / "package.json")) {
        return fail("s3rver is not installed at " + package.string() +
                    ": run scripts/setup.sh (it installs it with npm)");
    }
    std::filesystem::create_directories(dir / "data");
    S3Server s;
    s.dir_ = dir;
    s.options_ = options;
    if (start_on_free_port([&](int port) {
            s.port_ = port;
            return s.launch();
        })) {
        return s;
    }
    return fail(did_not_start("s3rver", dir, {"output.log"}));
}

bool S3Server::launch() {
    const std::string script = KCACHE_S3RVER_LAUNCHER;
    const std::string package = KCACHE_S3RVER_PACKAGE;
    const std::string port = std::to_string(port_);
    const std::string data = (dir_ / "data").string();
    const std::string log = (dir_ / "requests.log").string();
    const std::string out = (dir_ / "output.log").string();
    const char* mode = options_.lenient ? "lenient" : "strict";
    pid_ = ::fork();
    if (pid_ == 0) {
        if (std::freopen(out.c_str(), "a", stdout) == nullptr ||
            std::freopen(out.c_str(), "a", stderr) == nullptr) {
            ::_exit(126);
        }
        ::execlp("node", "node", script.c_str(), package.c_str(), port.c_str(), data.c_str(),
                 options_.bucket.c_str(), log.c_str(), mode, static_cast<char*>(nullptr));
        ::_exit(127);
    }
    return wait_listening(pid_, port_);
}

void S3Server::stop() {
    stop_process(pid_);
}

bool S3Server::restart() {
    return pid_ <= 0 && launch();
}

std::string S3Server::endpoint() const {
    return "http://127.0.0.1:" + std::to_string(port_);
}

std::string S3Server::vhost_endpoint() const {
    return "http://s3.localhost:" + std::to_string(port_);
}

std::filesystem::path S3Server::object_file(const std::string& key) const {
    return dir_ / "data" / options_.bucket / (key + "._S3rver_object");
}

namespace {

struct LoggedRequest {
    std::string method;
    int status = 0;
    double us = 0;
};

// The requests.log lines of `dir`, once the last response has landed.
std::vector<LoggedRequest> logged_requests(const std::filesystem::path& dir) {
    // A request is logged once its response has gone out: let it land.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ifstream log(dir / "requests.log");
    std::vector<LoggedRequest> out;
    for (std::string line; std::getline(log, line);) {
        std::istringstream fields(line);
        LoggedRequest r;
        std::string path;
        fields >> r.method >> path >> r.status >> r.us;
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace

std::size_t S3Server::count(const std::string& method, int status) const {
    std::size_t n = 0;
    for (const LoggedRequest& r : logged_requests(dir_)) {
        n += r.method == method && (status == 0 || r.status == status) ? 1 : 0;
    }
    return n;
}

std::vector<double> S3Server::durations_us(const std::string& method) const {
    std::vector<double> out;
    for (const LoggedRequest& r : logged_requests(dir_)) {
        if (r.method == method) {
            out.push_back(r.us);
        }
    }
    return out;
}

}  // namespace kcache::test
