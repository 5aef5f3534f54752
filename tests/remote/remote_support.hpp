#pragma once
// Shared by the remote tier's tests: a started nginx, settings for it, made-up
// entries (the client does not care what the bytes are), small file edits.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "kcache/remote/remote.hpp"
#include "kcache/store/key.hpp"
#include "nginx_server.hpp"

namespace kcache::test {

// NginxServer::start(`dir`, `options`), failing the calling test with
// nginx's error log when it does not start.
std::optional<NginxServer> start_nginx(const std::filesystem::path& dir,
                                       const NginxOptions& options = {});

// Settings for `url` with short timeouts and state kept in `state_dir`.
remote::Settings test_settings(const std::string& url, const std::filesystem::path& state_dir);

// Key fields of made-up entry `n` (distinct per `n`).
store::KeyFields made_up_fields(int n);
// `size` bytes of made-up binary for entry `n` (partly compressible).
store::Bytes made_up_bytes(int n, std::size_t size = 48 * 1024);
// Provenance as a JIT would write it.
store::Provenance made_up_provenance();

// Flips one bit of the byte at `offset` from the end (1 = the last byte) of `file`.
void flip_byte_from_end(const std::filesystem::path& file, std::size_t offset);
// Flips one bit of the byte at `offset` from the start of `file`.
void flip_byte(const std::filesystem::path& file, std::size_t offset);

using Millis = std::chrono::milliseconds;
// Milliseconds since `start`.
long long elapsed_ms(std::chrono::steady_clock::time_point start);

}  // namespace kcache::test
