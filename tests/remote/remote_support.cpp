#include "remote_support.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "backend.hpp"
#include "breaker.hpp"
#include "kcache/sign/signature.hpp"
#include "store_samples.hpp"

namespace kcache::test {

void RemoteServerTest::SetUp() {
    TempDirTest::SetUp();
    server_ = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server_);
}

std::unique_ptr<remote::Client> RemoteServerTest::client(remote::Settings s) {
    auto c = remote::Client::open(std::move(s));
    EXPECT_TRUE(c) << c.error().message;
    return c ? std::move(*c) : nullptr;
}

std::optional<NginxServer> start_nginx(const std::filesystem::path& dir,
                                       const NginxOptions& options) {
    auto server = NginxServer::start(dir, options);
    if (!server) {
        ADD_FAILURE() << server.error();
        return std::nullopt;
    }
    return std::move(server).value();
}

namespace {

// Made once by `kcache keygen` for these tests.
constexpr const char* kWriterKey =
    "untrusted comment: kcache secret key 5A0E5166D3E2D883 (unencrypted, minisign format)\n"
    "RWQAAEIyAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAg9ji02ZRDlqyDjTpBL+"
    "FUE2UYYBzt48CR89DWNJO9uX6UVA9v8inrRls0AABIvW6VVtxnRMnjwcZyiRjV/Zq/mfXFDpL+LyXL49QK1sPWAGpZf"
    "Zmyp5quC5gfahowyBCG3tfgMozfm0=\n";

store::SecretKey parsed(const char* text) {
    auto key = store::parse_secret_key(text);
    EXPECT_TRUE(key) << key.error().message;
    return key ? *key : store::SecretKey{};
}

}  // namespace

store::SecretKey test_signing_key() {
    static const store::SecretKey key = parsed(kWriterKey);
    return key;
}

store::SecretKey other_signing_key() {
    static const store::SecretKey key = [] {
        auto k = store::generate_key();
        EXPECT_TRUE(k) << k.error().message;
        return k ? *k : store::SecretKey{};
    }();
    return key;
}

std::filesystem::path write_test_keys(const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir);
    const auto base = dir / "writer";
    const store::SecretKey key = test_signing_key();
    EXPECT_TRUE(store::write_text_file(base.string() + ".key", store::format_secret_key(key), 0600,
                                       store::Replace::yes));
    EXPECT_TRUE(store::write_text_file(base.string() + ".pub",
                                       store::format_public_key(key.public_key()), 0644,
                                       store::Replace::yes));
    return base;
}

std::vector<std::string> signing_env(const std::filesystem::path& dir) {
    const auto base = write_test_keys(dir).string();
    return {"KCACHE_REMOTE_SIGNING_KEY=" + base + ".key", "KCACHE_TRUSTED_KEYS=" + base + ".pub"};
}

remote::Settings test_settings(const std::string& url, const std::filesystem::path& state_dir) {
    std::filesystem::create_directories(state_dir);
    remote::Settings s;
    const auto keys = write_test_keys(state_dir / "keys");
    s.signing_key_file = keys.string() + ".key";
    s.trusted_keys.add({test_signing_key().public_key(), keys.string() + ".pub"});
    s.base_urls = {url};
    s.timeout = std::chrono::milliseconds(2000);
    s.connect_timeout = std::chrono::milliseconds(1000);
    s.state_dir = state_dir;
    return s;
}

std::filesystem::path breaker_file(const std::filesystem::path& state_dir, const std::string& kind,
                                   const std::string& url) {
    return state_dir / ("remote-" + kind + "." + remote::breaker_tag(remote::server_name(url)));
}

std::vector<std::filesystem::path> down_marks(const std::filesystem::path& state_dir) {
    std::vector<std::filesystem::path> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(state_dir, ec)) {
        const std::string name = e.path().filename().string();
        if (name.rfind("remote-down.", 0) == 0 && name.find(".tmp.") == std::string::npos) {
            out.push_back(e.path());
        }
    }
    return out;
}

store::KeyFields made_up_fields(int n) {
    store::KeyFields f = sample_fields(n);
    f.kernel_name = "made_up_" + std::to_string(n);
    return f;
}

store::Bytes made_up_bytes(int n, std::size_t size) {
    store::Bytes b(size);
    std::uint32_t x = 2463534242u + static_cast<std::uint32_t>(n);
    for (std::size_t i = 0; i < size; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        b[i] = (i % 4 == 0) ? static_cast<std::uint8_t>(x) : static_cast<std::uint8_t>(i / 64);
    }
    return b;
}

store::Provenance made_up_provenance() {
    return test_provenance();
}

void flip_byte(const std::filesystem::path& file, std::size_t offset) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(c ^ 0x10));
}

void flip_byte_from_end(const std::filesystem::path& file, std::size_t offset) {
    flip_byte(file, std::filesystem::file_size(file) - offset);
}

long long elapsed_ms(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start)
        .count();
}

std::string token_command_printing(const std::filesystem::path& token,
                                   const std::filesystem::path& runs) {
    return "echo run >> '" + runs.string() + "'; cat '" + token.string() + "'";
}

std::size_t line_count(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::size_t n = 0;
    for (std::string line; std::getline(in, line);) {
        ++n;
    }
    return n;
}

}  // namespace kcache::test
