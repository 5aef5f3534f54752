// The remote tier's settings: environment over config file over defaults;
// malformed values are errors naming the variable; bad combinations refuse
// to open the cache instead of silently doing something else.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "cache_fixture.hpp"
#include "kcache/config/remote_tier.hpp"
#include "kcache/service/service_api.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

constexpr const char* kRemoteVariables[] = {"KCACHE_REMOTE",
                                            "KCACHE_REMOTE_READONLY",
                                            "KCACHE_REMOTE_TIMEOUT_MS",
                                            "KCACHE_REMOTE_CONNECT_TIMEOUT_MS",
                                            "KCACHE_REMOTE_TOKEN_FILE",
                                            "KCACHE_REMOTE_TOKEN_COMMAND",
                                            "KCACHE_REMOTE_TOKEN_LIFETIME",
                                            "KCACHE_REMOTE_NETRC",
                                            "KCACHE_REMOTE_CA",
                                            "KCACHE_REMOTE_REQUIRED",
                                            "KCACHE_REMOTE_BREAKER_MS",
                                            "KCACHE_REMOTE_ALLOW_HTTP_TOKEN",
                                            "KCACHE_REMOTE_REQUIRE_SIGNED",
                                            "KCACHE_REMOTE_SIGNING_KEY",
                                            "KCACHE_REMOTE_S3_ENDPOINT",
                                            "KCACHE_REMOTE_S3_REGION",
                                            "KCACHE_REMOTE_S3_URL_STYLE",
                                            "KCACHE_REMOTE_S3_CREDENTIALS_FILE",
                                            "KCACHE_REMOTE_S3_PROFILE",
                                            "AWS_ACCESS_KEY_ID",
                                            "AWS_SECRET_ACCESS_KEY",
                                            "AWS_SHARED_CREDENTIALS_FILE",
                                            "KCACHE_CONFIG"};

class RemoteConfig : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        for (const char* v : kRemoteVariables) {
            ::unsetenv(v);
        }
        ::setenv("XDG_CONFIG_HOME", (dir() / "xdg").c_str(), 1);
        ::setenv("KCACHE_DIR", (dir() / "store").c_str(), 1);
    }
    void TearDown() override {
        for (const char* v : kRemoteVariables) {
            ::unsetenv(v);
        }
        TempDirTest::TearDown();
    }
};

TEST_F(RemoteConfig, DefaultsLeaveTheRemoteOff) {
    Config c;
    std::string err;
    ASSERT_TRUE(load_config(c, err)) << err;
    EXPECT_TRUE(c.remote_urls.empty());
    EXPECT_EQ(c.remote_timeout.count(), 3000);
    EXPECT_EQ(c.remote_connect_timeout.count(), 1000);
    EXPECT_EQ(c.remote_breaker_window.count(), 30'000);
    EXPECT_EQ(c.origins["remote"].second, Source::default_value);
}

// Signed objects are required unless turned off; the signing key and the
// policy come from the file or the environment like every remote setting.
TEST_F(RemoteConfig, SignaturesAreRequiredByDefaultAndTheKeyIsASetting) {
    Config c;
    std::string err;
    ASSERT_TRUE(load_config(c, err)) << err;
    EXPECT_TRUE(c.remote_require_signed);
    EXPECT_TRUE(c.remote_signing_key.empty());
    EXPECT_EQ(service::remote_settings(c).signatures, remote::ObjectSignatures::require);
    write_user_config(dir(), "remote_require_signed = false\nremote_signing_key = /k/fleet.key\n");
    Config f;
    ASSERT_TRUE(load_config(f, err)) << err;
    EXPECT_FALSE(f.remote_require_signed);
    EXPECT_EQ(f.remote_signing_key, "/k/fleet.key");
    EXPECT_EQ(service::remote_settings(f).signatures, remote::ObjectSignatures::accept_unsigned);
    EXPECT_EQ(service::remote_settings(f).signing_key_file, "/k/fleet.key");
    ::setenv("KCACHE_REMOTE_REQUIRE_SIGNED", "1", 1);
    ::setenv("KCACHE_REMOTE_SIGNING_KEY", "/k/other.key", 1);
    Config e;
    ASSERT_TRUE(load_config(e, err)) << err;
    EXPECT_TRUE(e.remote_require_signed);
    EXPECT_EQ(e.remote_signing_key, "/k/other.key");
    ::setenv("KCACHE_REMOTE_REQUIRE_SIGNED", "perhaps", 1);
    Config bad;
    EXPECT_FALSE(load_config(bad, err));
    EXPECT_NE(err.find("KCACHE_REMOTE_REQUIRE_SIGNED"), std::string::npos) << err;
}

TEST_F(RemoteConfig, EnvironmentBeatsTheFile) {
    write_user_config(dir(),
                      "remote = http://a.example/c  https://b.example\nremote_timeout_ms = 900\n"
                      "remote_readonly = 1\n");
    ::setenv("KCACHE_REMOTE_TIMEOUT_MS", "250", 1);
    ::setenv("KCACHE_REMOTE_BREAKER_MS", "5000", 1);
    ::setenv("KCACHE_REMOTE_REQUIRED", "true", 1);
    Config c;
    std::string err;
    ASSERT_TRUE(load_config(c, err)) << err;
    ASSERT_EQ(c.remote_urls.size(), 2u);
    EXPECT_EQ(c.remote_urls[1], "https://b.example");
    EXPECT_TRUE(c.remote_read_only);
    EXPECT_TRUE(c.remote_required);
    EXPECT_EQ(c.remote_timeout.count(), 250);
    EXPECT_EQ(c.remote_breaker_window.count(), 5000);
    EXPECT_EQ(c.origins["remote"].second, Source::config_file);
    EXPECT_EQ(c.origins["remote_timeout_ms"].second, Source::environment);
}

TEST_F(RemoteConfig, MalformedValuesNameTheVariable) {
    expect_each_refused_naming_its_variable({{"KCACHE_REMOTE", "ftp://x"},
                                             {"KCACHE_REMOTE_TIMEOUT_MS", "0"},
                                             {"KCACHE_REMOTE_TIMEOUT_MS", "2h"},
                                             {"KCACHE_REMOTE_READONLY", "maybe"},
                                             {"KCACHE_REMOTE_BREAKER_MS", "-1"}});
}

TEST_F(RemoteConfig, TokenOverPlainHttpRefusesToOpen) {
    std::ofstream(dir() / "token") << "s3cret\n";
    Config c;
    c.dir = dir() / "store";
    c.remote_urls = {"http://127.0.0.1:9"};
    c.remote_token_file = dir() / "token";
    Outcome o;
    EXPECT_EQ(Cache::open(c, &o), nullptr);
    EXPECT_EQ(o.status, StatusCode::config_error);
    EXPECT_NE(o.message.find("plain http"), std::string::npos) << o.message;
    auto client = service::open_remote(c);
    ASSERT_FALSE(client);
    EXPECT_EQ(client.error().code, remote::RemoteErrc::config);
    EXPECT_EQ(client.error().message.rfind("remote tier: ", 0), 0u) << client.error().message;
    c.remote_allow_http_token = true;
    EXPECT_NE(Cache::open(c, &o), nullptr) << o.message;
}

TEST_F(RemoteConfig, ATokenCommandIsASettingAndRefusesToOpenBesideATokenFile) {
    std::filesystem::create_directories(dir() / "xdg/kcache");
    std::ofstream(dir() / "xdg/kcache/config") << "remote_token_lifetime = 10m\n";
    ::setenv("KCACHE_REMOTE_TOKEN_COMMAND", "print-token --audience kcache", 1);
    Config c;
    std::string err;
    ASSERT_TRUE(load_config(c, err)) << err;
    const remote::Settings s = service::remote_settings(c);
    EXPECT_EQ(s.token_command, "print-token --audience kcache");
    EXPECT_EQ(s.token_lifetime, std::chrono::minutes(10));

    std::ofstream(dir() / "token") << "s3cret\n";
    c.remote_urls = {"https://127.0.0.1:9"};
    c.remote_token_file = dir() / "token";
    Outcome o;
    EXPECT_EQ(Cache::open(c, &o), nullptr);
    EXPECT_EQ(o.status, StatusCode::config_error);
    EXPECT_NE(o.message.find("not both"), std::string::npos) << o.message;
    c.remote_token_file.clear();
    c.remote_urls = {"http://127.0.0.1:9"};  // a command's token is a token: not over http
    EXPECT_EQ(Cache::open(c, &o), nullptr);
    EXPECT_NE(o.message.find("plain http"), std::string::npos) << o.message;
    expect_each_refused_naming_its_variable(
        {{"KCACHE_REMOTE_TOKEN_LIFETIME", "0"}, {"KCACHE_REMOTE_TOKEN_LIFETIME", "soon"}});
}

TEST_F(RemoteConfig, S3SettingsFromTheFileAndTheEnvironment) {
    std::filesystem::create_directories(dir() / "xdg/kcache");
    std::ofstream(dir() / "xdg/kcache/config")
        << "remote = s3://kcache-fleet/ci\nremote_s3_endpoint = https://s3.site:9000\n"
           "remote_s3_url_style = virtual\nremote_s3_profile = ci\n";
    ::setenv("KCACHE_REMOTE_S3_REGION", "eu-west-3", 1);
    ::setenv("KCACHE_REMOTE_S3_CREDENTIALS_FILE", "/etc/kcache/aws", 1);
    Config c;
    std::string err;
    ASSERT_TRUE(load_config(c, err)) << err;
    const remote::S3Settings s = service::remote_settings(c).s3;
    EXPECT_EQ(s.endpoint, "https://s3.site:9000");
    EXPECT_EQ(s.region, "eu-west-3");
    EXPECT_EQ(s.url_style, remote::S3UrlStyle::virtual_hosted);
    EXPECT_EQ(s.credentials_file, "/etc/kcache/aws");
    EXPECT_EQ(s.profile, "ci");
    EXPECT_EQ(c.origins["remote_s3_region"].second, Source::environment);
    EXPECT_EQ(c.origins["remote_s3_endpoint"].second, Source::config_file);
}

TEST_F(RemoteConfig, MalformedS3SettingsNameTheVariable) {
    expect_each_refused_naming_its_variable(
        {{"KCACHE_REMOTE_S3_ENDPOINT", "s3.site:9000"},
         {"KCACHE_REMOTE_S3_ENDPOINT", "https://s3.site/bucket"},
         {"KCACHE_REMOTE_S3_REGION", "EU West"},
         {"KCACHE_REMOTE_S3_URL_STYLE", "subdomain"}});
}

TEST_F(RemoteConfig, AnS3RemoteWithoutCredentialsRefusesToOpenSayingWhy) {
    ::setenv("HOME", dir().c_str(), 1);  // no ~/.aws/credentials
    Config c;
    c.dir = dir() / "store";
    c.remote_urls = {"s3://kcache-fleet/ci"};
    Outcome o;
    EXPECT_EQ(Cache::open(c, &o), nullptr);
    EXPECT_EQ(o.status, StatusCode::config_error);
    EXPECT_NE(o.message.find("no S3 credentials"), std::string::npos) << o.message;
    c.remote_urls = {"s3://Not_A_Bucket/ci"};
    ::setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE", 1);
    ::setenv("AWS_SECRET_ACCESS_KEY", "secret", 1);
    EXPECT_EQ(Cache::open(c, &o), nullptr);
    EXPECT_NE(o.message.find("Not_A_Bucket"), std::string::npos) << o.message;
}

}  // namespace
}  // namespace kcache::test
