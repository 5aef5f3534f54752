#pragma once
// A loopback S3-protocol server for the remote tier's tests and benchmarks:
// s3rver (npm @20minutes/s3rver, installed by scripts/setup.sh into
// .deps/s3rver) run by Node.js through tests/harness/s3rver.js, in its own
// directory on a free port, with one bucket, stopped by PID.
//
// What s3rver checks of a request signed in its Authorization header: the
// access key id is its account's (else 403 InvalidAccessKeyId); the
// signature it recomputes with that account's secret from the method, the
// path, the query, the headers the request lists as signed and the payload
// hash in x-amz-content-sha256, over the request's own credential scope,
// equals the one sent (else 403 SignatureDoesNotMatch); x-amz-date is within
// 15 minutes of its clock (else RequestTimeTooSkewed). What it does not
// check: that the body hashes to x-amz-content-sha256, that Host and the
// x-amz-* headers are among the signed ones, that the scope's region is its
// own, any session token, or that a request is signed at all (an anonymous
// request is served). Virtual-hosted requests it signs with the bucket in
// front of the path (SigV2's rule), so they are checked against a lenient
// server (S3Options::lenient) and signed virtual-hosted requests are proven
// by the published test vectors instead.

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"

namespace kcache::test {

struct S3Options {
    std::string bucket = "kcache-test";
    bool lenient = false;  // any well-formed signature (see above)
};

class S3Server {
  public:
    // The one account s3rver knows.
    static constexpr const char* kAccessKeyId = "S3RVER";
    static constexpr const char* kSecret = "S3RVER";

    // Starts s3rver in `dir`; the error names the directory, says to run
    // scripts/setup.sh when s3rver is not installed, and carries its output.
    static Result<S3Server, std::string> start(const std::filesystem::path& dir,
                                               const S3Options& options = {});
    S3Server(S3Server&& o) noexcept;
    S3Server& operator=(S3Server&&) = delete;
    S3Server(const S3Server&) = delete;
    ~S3Server();

    // "http://127.0.0.1:PORT": the endpoint for path-style requests.
    std::string endpoint() const;
    // "http://s3.localhost:PORT": BUCKET.s3.localhost reaches the bucket
    // (libcurl resolves *.localhost to loopback by itself).
    std::string vhost_endpoint() const;
    const std::string& bucket() const { return options_.bucket; }
    // The stored object of `key` (the path below the bucket), as s3rver keeps it.
    std::filesystem::path object_file(const std::string& key) const;
    // How many requests used `method` ("PUT", "GET", …), and of those how
    // many got `status` (0: any).
    std::size_t count(const std::string& method, int status = 0) const;
    // The server's own time, in µs, of each request that used `method`, in
    // the order they were served (the log's fourth field).
    std::vector<double> durations_us(const std::string& method) const;
    // Stops the server (SIGTERM by PID, then waits); idempotent.
    void stop();
    // Starts it again on the same port and data (after stop()).
    bool restart();
    pid_t pid() const { return pid_; }

  private:
    S3Server() = default;
    bool launch();
    std::filesystem::path dir_;
    S3Options options_;
    int port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace kcache::test
