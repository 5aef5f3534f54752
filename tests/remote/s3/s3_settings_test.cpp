// The S3 backend's settings without a server: which URLs and endpoints are
// accepted, where requests go (path-style, virtual-hosted), and where
// credentials are found, each failure a config error that says what to do
// and never shows a secret.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <utility>

#include "backend.hpp"
#include "kcache/remote/schemes.hpp"
#include "s3/s3.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

using remote::RemoteErrc;

// Sets (or unsets, for nullopt) an environment variable for one scope.
class EnvVar {
  public:
    EnvVar(const char* name, std::optional<std::string> value) : name_(name) {
        if (const char* old = std::getenv(name)) {
            old_ = old;
        }
        value ? ::setenv(name, value->c_str(), 1) : ::unsetenv(name);
    }
    ~EnvVar() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }
    EnvVar(const EnvVar&) = delete;
    EnvVar& operator=(const EnvVar&) = delete;

  private:
    const char* name_;
    std::optional<std::string> old_;
};

// No AWS variables, HOME in the test's directory (no ~/.aws/credentials).
class S3Settings : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        for (const char* v :
             {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
              "AWS_SHARED_CREDENTIALS_FILE", "AWS_REGION", "AWS_DEFAULT_REGION"}) {
            env_.emplace_back(std::make_unique<EnvVar>(v, std::nullopt));
        }
        env_.emplace_back(std::make_unique<EnvVar>("HOME", dir().string()));
    }
    std::filesystem::path write(const std::string& name, const std::string& text) {
        const auto path = dir() / name;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path) << text;
        return path;
    }
    std::vector<std::unique_ptr<EnvVar>> env_;
};

TEST_F(S3Settings, BucketNamesAndPrefixesAreCheckedAsS3DoesWithoutNormalizing) {
    for (const char* good : {"s3://kcache-test", "s3://kcache.fleet-1/ci/v2", "s3://abc/a_b/C.d"}) {
        EXPECT_TRUE(remote::check_s3_url(good)) << good;
    }
    for (const char* bad : {"s3://", "s3://ab", "s3://Kcache", "s3://-kcache", "s3://kc_ache",
                            "s3://a..b", "s3://kcache/a//b", "s3://kcache/../x", "s3://kcache/./x",
                            "s3://kcache/a b", "s3://kcache/a%2f", "s3://kcache/a?x"}) {
        auto r = remote::check_s3_url(bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_EQ(r.error().code, RemoteErrc::config);
        EXPECT_NE(r.error().message.find(bad), std::string::npos) << r.error().message;
    }
}

TEST_F(S3Settings, PathStyleAndVirtualHostedUrls) {
    remote::S3Settings s;
    s.region = "eu-west-3";
    auto aws = remote::s3_target(s);  // AWS's endpoint: virtual-hosted unless told
    ASSERT_TRUE(aws);
    EXPECT_EQ(remote::s3_http_url(*aws, "s3://kc/ci/kcache/v1/ab/abcd"),
              "https://kc.s3.eu-west-3.amazonaws.com/ci/kcache/v1/ab/abcd");
    s.url_style = remote::S3UrlStyle::path;
    EXPECT_EQ(remote::s3_http_url(*remote::s3_target(s), "s3://kc/ci/kcache/v1/ab/abcd"),
              "https://s3.eu-west-3.amazonaws.com/kc/ci/kcache/v1/ab/abcd");
    s.endpoint = "http://minio.site:9000/";  // another endpoint: path-style unless told
    s.url_style = remote::S3UrlStyle::automatic;
    EXPECT_EQ(remote::s3_http_url(*remote::s3_target(s), "s3://kc/kcache/v1/ab/abcd"),
              "http://minio.site:9000/kc/kcache/v1/ab/abcd");
    s.url_style = remote::S3UrlStyle::virtual_hosted;
    EXPECT_EQ(remote::s3_http_url(*remote::s3_target(s), "s3://kc/kcache/v1/ab/abcd"),
              "http://kc.minio.site:9000/kcache/v1/ab/abcd");
    for (const char* bad : {"minio.site", "ftp://minio.site", "http://", "https://h/path",
                            "http://user@h", "http://h?x"}) {
        s.endpoint = bad;
        auto t = remote::s3_target(s);
        ASSERT_FALSE(t) << bad;
        EXPECT_NE(t.error().message.find(bad), std::string::npos) << t.error().message;
    }
}

TEST_F(S3Settings, RegionFromTheSettingThenTheEnvironmentThenUsEast1) {
    remote::S3Settings s;
    EXPECT_EQ(remote::s3_region(s), "us-east-1");
    EnvVar fallback("AWS_DEFAULT_REGION", "ap-south-1");
    EXPECT_EQ(remote::s3_region(s), "ap-south-1");
    EnvVar region("AWS_REGION", "eu-north-1");
    EXPECT_EQ(remote::s3_region(s), "eu-north-1");
    s.region = "us-west-2";
    EXPECT_EQ(remote::s3_region(s), "us-west-2");
}

TEST_F(S3Settings, CredentialsFromTheEnvironmentNameTheKeyNotTheSecret) {
    EnvVar id("AWS_ACCESS_KEY_ID", "AKIAENVEXAMPLE");
    EnvVar secret("AWS_SECRET_ACCESS_KEY", "env-secret-value");
    EnvVar token("AWS_SESSION_TOKEN", "env-session-token");
    auto c = remote::find_s3_credentials({});
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->access_key_id, "AKIAENVEXAMPLE");
    EXPECT_EQ(c->secret, "env-secret-value");
    EXPECT_EQ(c->session_token, "env-session-token");
    EXPECT_NE(c->origin.find("AKIAENVEXAMPLE from the environment"), std::string::npos);
    EXPECT_NE(c->origin.find("AWS_SESSION_TOKEN"), std::string::npos);
    EXPECT_EQ(c->origin.find("env-secret-value"), std::string::npos);
    EXPECT_EQ(c->origin.find("env-session-token"), std::string::npos);
}

TEST_F(S3Settings, HalfACredentialInTheEnvironmentIsAnError) {
    EnvVar id("AWS_ACCESS_KEY_ID", "AKIAENVEXAMPLE");
    auto c = remote::find_s3_credentials({});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, RemoteErrc::config);
    EXPECT_NE(c.error().message.find("AWS_SECRET_ACCESS_KEY"), std::string::npos);
}

TEST_F(S3Settings, CredentialsFileProfilesAndItsErrors) {
    const auto file = write(".aws/credentials",
                            "# comment\n[default]\naws_access_key_id = AKIADEFAULT\n"
                            "aws_secret_access_key = default-secret\n\n[ci]\n"
                            "aws_access_key_id=AKIACI\naws_secret_access_key=ci-secret\n"
                            "aws_session_token = ci-token\nregion = eu-west-1\n");
    auto c = remote::find_s3_credentials({});  // ~/.aws/credentials, [default]
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->access_key_id, "AKIADEFAULT");
    EXPECT_EQ(c->origin, "AKIADEFAULT from " + file.string() + " [default]");
    {
        EnvVar profile("AWS_PROFILE", "ci");
        c = remote::find_s3_credentials({});
        ASSERT_TRUE(c) << c.error().message;
        EXPECT_EQ(c->secret, "ci-secret");
        EXPECT_EQ(c->session_token, "ci-token");
    }
    remote::S3Settings s;
    s.profile = "nightly";
    c = remote::find_s3_credentials(s);
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message.find("no profile [nightly]"), std::string::npos);
    // kcache's own file wins over the environment.
    EnvVar id("AWS_ACCESS_KEY_ID", "AKIAENVEXAMPLE");
    EnvVar secret("AWS_SECRET_ACCESS_KEY", "env-secret-value");
    s.profile = "ci";
    s.credentials_file = file;
    c = remote::find_s3_credentials(s);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->access_key_id, "AKIACI");
    s.credentials_file = write("broken", "[ci]\naws_access_key_id AKIA\n");
    c = remote::find_s3_credentials(s);
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message.find(s.credentials_file.string() + ":2:"), std::string::npos)
        << c.error().message;
    s.credentials_file = write("no-secret", "[ci]\naws_access_key_id = AKIA\n");
    c = remote::find_s3_credentials(s);
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message.find("aws_secret_access_key"), std::string::npos);
}

TEST_F(S3Settings, NoCredentialsAnywhereIsAConfigErrorSayingWhereToPutThem) {
    remote::Settings s;
    s.base_urls = {"s3://kcache-test/ci"};
    auto c = remote::Client::open(s);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, RemoteErrc::config);
    EXPECT_NE(c.error().message.find("no S3 credentials"), std::string::npos);
    EXPECT_NE(c.error().message.find("AWS_ACCESS_KEY_ID"), std::string::npos);
    EXPECT_NE(c.error().message.find("credentials_file attribute"), std::string::npos);
}

TEST_F(S3Settings, AttributesOfTheUrlOverrideTheDefaultsAndArePercentDecoded) {
    remote::S3Settings defaults;
    defaults.region = "eu-west-3";
    defaults.profile = "fleet";
    auto s = remote::s3_settings_of(
        "s3://kc/ci",
        "endpoint=http://127.0.0.1:9000&url_style=virtual&credentials_file=/etc/a%26b&region=ap-"
        "south-1",
        defaults);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(s->endpoint, "http://127.0.0.1:9000");
    EXPECT_EQ(s->url_style, remote::S3UrlStyle::virtual_hosted);
    EXPECT_EQ(s->credentials_file, "/etc/a&b");
    EXPECT_EQ(s->region, "ap-south-1");
    EXPECT_EQ(s->profile, "fleet");  // not given: the default's
    s = remote::s3_settings_of("s3://kc/ci", "profile=ci&url_style=auto", defaults);
    ASSERT_TRUE(s) << s.error().message;
    EXPECT_EQ(s->profile, "ci");
    EXPECT_EQ(s->region, "eu-west-3");
    EXPECT_EQ(s->url_style, remote::S3UrlStyle::automatic);
}

TEST_F(S3Settings, ABadAttributeIsAConfigErrorNamingTheUrlAndWhatIsTaken) {
    const std::pair<const char*, const char*> cases[] = {
        {"s3://kc/ci?regoin=eu-west-1", "names: region, endpoint"},
        {"s3://kc/ci?region", "name=value"},
        {"s3://kc/ci?region=eu&region=us", "given twice"},
        {"s3://kc/ci?region=EU_WEST", "a-z, 0-9"},
        {"s3://kc/ci?url_style=host", "path, virtual or auto"},
        {"s3://kc/ci?endpoint=ftp://h", "http://host[:port]"},
        {"s3://kc/ci?endpoint=http%3", "%-encoded"},
        {"https://cache.site/kc?region=eu", "takes no attributes"},
        {"redis://127.0.0.1:6379/0?ttl=5", "takes no attributes"},
    };
    for (const auto& [url, says] : cases) {
        auto r = remote::check_base_url(url);
        ASSERT_FALSE(r) << url;
        EXPECT_EQ(r.error().code, RemoteErrc::config);
        EXPECT_NE(r.error().message.find(says), std::string::npos) << r.error().message;
        remote::Settings s;
        s.base_urls = {url};
        auto c = remote::Client::open(s);  // the client refuses it the same way
        ASSERT_FALSE(c) << url;
        EXPECT_EQ(c.error().message, r.error().message);
    }
    EXPECT_TRUE(remote::check_base_url("s3://kc/ci?region=eu-west-1&url_style=path"));
    EXPECT_TRUE(remote::check_base_url("s3://kc/ci?"));  // an empty list: none
    EXPECT_TRUE(remote::check_base_url("https://cache.site/kc"));
}

TEST_F(S3Settings, TheDoctorsCredentialsLineReadsTheUrlsOwnFile) {
    const auto file = write("fleet-aws",
                            "[ci]\naws_access_key_id = AKIAFLEET\n"
                            "aws_secret_access_key = fleet-secret\n");
    auto origin = remote::s3_credentials_origin(
        "s3://kc/ci?profile=ci&credentials_file=" + file.string(), {});
    ASSERT_TRUE(origin) << origin.error().message;
    EXPECT_EQ(*origin, "AKIAFLEET from " + file.string() + " [ci]");
    origin = remote::s3_credentials_origin("s3://kc/ci?profile=ci", {});  // no file anywhere
    ASSERT_FALSE(origin);
    EXPECT_NE(origin.error().message.find("no S3 credentials"), std::string::npos);
}

TEST_F(S3Settings, AKeyIdThatWouldBreakAHeaderIsRefused) {
    EnvVar id("AWS_ACCESS_KEY_ID", "AKIA\r\nX-Injected: 1");
    EnvVar secret("AWS_SECRET_ACCESS_KEY", "s");
    auto c = remote::find_s3_credentials({});
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, RemoteErrc::config);
}

}  // namespace
}  // namespace kcache::test
