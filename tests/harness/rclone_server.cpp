#include "rclone_server.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <utility>

#include "nginx_server.hpp"

namespace kcache::test {

Result<RcloneServer, std::string> RcloneServer::start(const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir / "root");
    std::ofstream(dir / "rclone.conf", std::ios::trunc).flush();  // none of the user's remotes
    RcloneServer s;
    s.dir_ = dir;
    if (start_on_free_port([&](int port) {
            s.port_ = port;
            return s.launch();
        })) {
        return s;
    }
    return fail(did_not_start("rclone", dir, {"rclone.log"}));
}

bool RcloneServer::launch() {
    const std::string root = (dir_ / "root").string();
    const std::string conf = (dir_ / "rclone.conf").string();
    const std::string log = (dir_ / "rclone.log").string();
    const std::string addr = "127.0.0.1:" + std::to_string(port_);
    pid_ = ::fork();
    if (pid_ == 0) {
        if (std::FILE* f = std::freopen(log.c_str(), "w", stderr); f == nullptr) {
            ::_exit(126);
        }
        ::execl("/usr/bin/rclone", "rclone", "serve", "webdav", root.c_str(), "--addr",
                addr.c_str(), "--config", conf.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    return wait_listening(pid_, port_);
}

RcloneServer::RcloneServer(RcloneServer&& o) noexcept
    : dir_(std::move(o.dir_)), port_(o.port_), pid_(std::exchange(o.pid_, -1)) {}

RcloneServer::~RcloneServer() {
    stop();
}

void RcloneServer::stop() {
    stop_process(pid_);
}

std::string RcloneServer::url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
}

}  // namespace kcache::test
