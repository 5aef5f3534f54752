#pragma once
// A loopback Apache httpd with mod_dav (a strict WebDAV server: a PUT into a
// collection that does not exist is refused with 409) for the remote tier's
// tests, started in its own directory on a free port and stopped by PID.

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>

#include "kcache/common/result.hpp"

namespace kcache::test {

struct ApacheOptions {
    // Only GET, HEAD, OPTIONS and PROPFIND allowed: PUT, MKCOL and DELETE
    // are refused with 403 (a location for readers).
    bool read_only = false;
    // Anonymous reads, authenticated writes: GET, HEAD, OPTIONS and PROPFIND
    // for anyone, every other method only for a user of this htpasswd file
    // (Basic authentication; 401 otherwise). Read at each request.
    std::optional<std::filesystem::path> writers_file;
};

class ApacheServer {
  public:
    // Starts /usr/sbin/apache2 -f <dir>/httpd.conf -DFOREGROUND with mod_dav,
    // mod_dav_fs and a DavLockDB in `dir`; the error names the directory and
    // carries the error log. Run as root, its workers serve as nobody, so
    // `dir` and its parent are made traversable and the served tree theirs.
    static Result<ApacheServer, std::string> start(const std::filesystem::path& dir,
                                                   const ApacheOptions& options = {});
    ApacheServer(ApacheServer&& o) noexcept;
    ApacheServer& operator=(ApacheServer&&) = delete;
    ApacheServer(const ApacheServer&) = delete;
    ~ApacheServer();

    // "http://127.0.0.1:PORT".
    std::string url() const;
    // The directory served (empty at start: no collection exists).
    std::filesystem::path root() const { return dir_ / "root"; }
    // How many logged requests used `method` ("PUT", "MKCOL", …), and of
    // those how many got `status` (0: any).
    std::size_t count(const std::string& method, int status = 0) const;
    // Stops the server (SIGTERM by PID, then waits); idempotent.
    void stop();

  private:
    ApacheServer() = default;
    bool launch();
    std::filesystem::path dir_;
    int port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace kcache::test
