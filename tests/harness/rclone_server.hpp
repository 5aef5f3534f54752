#pragma once
// A loopback `rclone serve webdav` for the remote tier's tests: another
// WebDAV server people run, which answers a PUT into a collection that does
// not exist with 404 (not 409) and a MKCOL of one that does with 201. Started
// in its own directory on a free port, stopped by PID.

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "kcache/common/result.hpp"

namespace kcache::test {

class RcloneServer {
  public:
    // Starts /usr/bin/rclone serve webdav <dir>/root with an empty config of
    // its own; the error names the directory and carries rclone's log.
    static Result<RcloneServer, std::string> start(const std::filesystem::path& dir);
    RcloneServer(RcloneServer&& o) noexcept;
    RcloneServer& operator=(RcloneServer&&) = delete;
    RcloneServer(const RcloneServer&) = delete;
    ~RcloneServer();

    // "http://127.0.0.1:PORT".
    std::string url() const;
    // The directory served (empty at start: no collection exists).
    std::filesystem::path root() const { return dir_ / "root"; }
    // Stops the server (SIGTERM by PID, then waits); idempotent.
    void stop();

  private:
    RcloneServer() = default;
    bool launch();
    std::filesystem::path dir_;
    int port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace kcache::test
