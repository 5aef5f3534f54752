#pragma once
// Shared by the remote tier's tests: a started nginx, settings for it, made-up
// entries (the client does not care what the bytes are), small file edits.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kcache/remote/remote.hpp"
#include "kcache/store/key.hpp"
#include "nginx_server.hpp"
#include "temp_dir.hpp"

namespace kcache::test {

// A loopback nginx started for each test, and clients opened for it.
class RemoteServerTest : public TempDirTest {
  protected:
    void SetUp() override;
    // Remote::Client::open(`s`), failing the test (nullptr) when it does not open.
    std::unique_ptr<remote::Client> client(remote::Settings s);
    std::optional<NginxServer> server_;
};

// NginxServer::start(`dir`, `options`), failing the calling test with
// nginx's error log when it does not start.
std::optional<NginxServer> start_nginx(const std::filesystem::path& dir,
                                       const NginxOptions& options = {});

// The key pair test writers sign with (the same in every process, so that
// a parent trusts what its children upload; trusted nowhere but in tests).
store::SecretKey test_signing_key();
// A second key pair, trusted by no test setting: "another writer".
store::SecretKey other_signing_key();
// Writes test_signing_key() as `dir`/writer.key and writer.pub (replacing
// them; safe while other processes do the same); returns `dir`/writer.
std::filesystem::path write_test_keys(const std::filesystem::path& dir);
// KCACHE_REMOTE_SIGNING_KEY and KCACHE_TRUSTED_KEYS for a CLI run that
// signs with and trusts the test key (written under `dir`).
std::vector<std::string> signing_env(const std::filesystem::path& dir);

// Puts what `start` (a server or cluster of the harness just started)
// holds into `slot` and returns true; false after failing the test with
// why it did not start.
template <class Server>
bool start_into(std::optional<Server>& slot, Result<Server, std::string> start) {
    if (!start) {
        ADD_FAILURE() << start.error();
        return false;
    }
    slot.emplace(std::move(*start));
    return true;
}

// Settings for `url` with short timeouts and state kept in `state_dir`;
// uploads signed with test_signing_key(), which is the one key trusted.
remote::Settings test_settings(const std::string& url, const std::filesystem::path& state_dir);

// The breaker's file `kind` ("down", "up") in `state_dir` for the server of
// `url` (breaker.hpp's grammar).
std::filesystem::path breaker_file(const std::filesystem::path& state_dir, const std::string& kind,
                                   const std::string& url);

// The breaker's down marks in `state_dir`, one per server marked down.
std::vector<std::filesystem::path> down_marks(const std::filesystem::path& state_dir);

// Key fields of made-up entry `n` (distinct per `n`): sample_fields(`n`)
// (store_samples.hpp) named made_up_`n`.
store::KeyFields made_up_fields(int n);
// `size` bytes of made-up binary for entry `n` (partly compressible).
store::Bytes made_up_bytes(int n, std::size_t size = 48 * 1024);
// Provenance as a JIT would write it: test_provenance() (store_samples.hpp).
store::Provenance made_up_provenance();

// Flips one bit of the byte at `offset` from the end (1 = the last byte) of `file`.
void flip_byte_from_end(const std::filesystem::path& file, std::size_t offset);
// Flips one bit of the byte at `offset` from the start of `file`.
void flip_byte(const std::filesystem::path& file, std::size_t offset);

// A token command for tests: notes each run as a line of `runs`, prints `token`.
std::string token_command_printing(const std::filesystem::path& token,
                                   const std::filesystem::path& runs);
// How many lines `file` has (0 when there is none).
std::size_t line_count(const std::filesystem::path& file);

using Millis = std::chrono::milliseconds;
// Milliseconds since `start`.
long long elapsed_ms(std::chrono::steady_clock::time_point start);

}  // namespace kcache::test
