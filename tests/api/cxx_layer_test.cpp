// The header-only C++ layer (<kcache/kcache.hpp>) through libkcache.so's C
// API only: every field of Config reaches the library and comes back
// unchanged, and a request answers with the library's whole outcome.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "kcache/kcache.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

// A Config with every setting away from its default (and valid).
Config unusual(const std::filesystem::path& dir) {
    Config c;
    c.dir = dir / "store";
    c.max_bytes = 3 << 20;
    c.jit_timeout = std::chrono::milliseconds(4321);
    c.disabled = true;
    c.read_only = true;
    c.packs = {dir / "a.kpack", dir / "packs"};
    c.jit_helper = "/opt/kcache-jit";
    c.jit_helpers = 2;
    c.jit_idle = std::chrono::milliseconds(999);
    c.device_db = dir / "devices.txt";
    c.tmpdir = dir / "tmp";
    c.remote_urls = {"http://127.0.0.1:9/a", "https://example.invalid/b"};
    c.remote_read_only = true;
    c.remote_timeout = std::chrono::milliseconds(1234);
    c.remote_connect_timeout = std::chrono::milliseconds(567);
    c.remote_token_file = dir / "token";
    c.remote_token_command = "print-token --audience kcache";
    c.remote_token_lifetime = std::chrono::milliseconds(61'000);
    c.remote_netrc = true;
    c.remote_ca = dir / "ca.pem";
    c.remote_required = true;
    c.remote_breaker_window = std::chrono::milliseconds(4000);
    c.remote_allow_http_token = true;
    c.remote_require_signed = false;
    c.remote_signing_key = dir / "key";
    c.remote_ttl = std::chrono::milliseconds(90'500);
    c.remote_namespace = "team-a,platform";
    c.remote_s3_endpoint = "http://127.0.0.1:9000";
    c.remote_s3_region = "eu-west-3";
    c.remote_s3_url_style = "path";
    c.remote_s3_credentials_file = dir / "credentials";
    c.remote_s3_profile = "ci";
    c.metrics = false;
    c.metrics_file = dir / "metrics-%p.prom";
    c.metrics_interval = std::chrono::milliseconds(2500);
    c.trace = "stderr";
    c.trace_max_bytes = 1 << 20;
    c.max_programs = 17;
    c.max_resident_bytes = 5 << 20;
    c.max_hot_bytes = 0;
    c.trusted_keys = {dir / "k.pub"};
    c.trusted_key_dirs = {dir / "trusted.d"};
    c.require_signed_packs = true;
    c.canary = CanaryPolicy::enforce;
    return c;
}

using CxxLayer = TempDirTest;

TEST_F(CxxLayer, EveryConfigFieldCrossesTheCApiUnchanged) {
    const Config given = unusual(dir());
    const Config defaults;
    detail::ConfigPtr c;
    ASSERT_EQ(detail::to_c(given, c), "");
    const Config back = detail::from_c(c.get());
    std::size_t n = 0;
    detail::for_each_setting(given, [&](const char* key, const auto& field) {
        ++n;
        std::string want, got, plain;
        detail::for_each_setting(back, [&](const char* k, const auto& f) {
            if (std::string(k) == key) {
                got = detail::to_text(k, f);
            }
        });
        detail::for_each_setting(defaults, [&](const char* k, const auto& f) {
            if (std::string(k) == key) {
                plain = detail::to_text(k, f);
            }
        });
        want = detail::to_text(key, field);
        EXPECT_EQ(got, want) << key;
        EXPECT_NE(want, plain) << key << " is not away from its default in this test";
    });
    EXPECT_EQ(n, 44u);
    // Each was set: its origin says so.
    EXPECT_EQ(back.origins.at("max_programs").second, Source::api);
    EXPECT_EQ(back.origins.at("max_programs").first, "17");
}

TEST_F(CxxLayer, AMalformedFieldIsAConfigErrorOfTheOpen) {
    Config c = unusual(dir());
    c.remote_s3_url_style = "sideways";
    Outcome o;
    EXPECT_EQ(Cache::open(c, &o), nullptr);
    EXPECT_EQ(o.status, StatusCode::config_error);
    EXPECT_NE(o.message.find("remote_s3_url_style"), std::string::npos) << o.message;
}

TEST_F(CxxLayer, ACacheOpensAndAnswersThroughTheCApi) {
    ::setenv("KCACHE_DIR", (dir() / "store").c_str(), 1);
    ::setenv("KCACHE_CANARY", "off", 1);
    Outcome o;
    auto cache = Cache::open_default(&o);
    ASSERT_NE(cache, nullptr) << o.message;
    EXPECT_EQ(o.status, StatusCode::ok);
    EXPECT_EQ(cache->config().dir, dir() / "store");
    EXPECT_EQ(cache->config().origins.at("dir").second, Source::environment);
    KernelRequest r;
    r.kernel = "dot";
    r.mode = Mode::fail_fast;
    Program p = cache->program(nullptr, nullptr, r);
    EXPECT_FALSE(p.ok());
    EXPECT_EQ(p.outcome().status, StatusCode::invalid_argument);
    EXPECT_FALSE(p.outcome().message.empty());
    const Outcome prepared = cache->prepare(nullptr);
    EXPECT_EQ(prepared.status, StatusCode::invalid_argument);
    EXPECT_NE(prepared.message.find("kcache_prepare_device"), std::string::npos)
        << prepared.message;
    EXPECT_STREQ(to_string(StatusCode::driver_suspect), "driver_suspect");
    EXPECT_STREQ(to_string(MissCause::not_stored), "not_stored");
    EXPECT_STREQ(version(), KCACHE_VERSION_STRING);
    EXPECT_EQ(cache->stats().jit_compiles, 0u);
    cache->drain(std::chrono::milliseconds(10));
}

}  // namespace
}  // namespace kcache::test
