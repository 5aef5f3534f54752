// Secrets that rotate while one client (one long-lived process) goes on,
// against real servers that accept only the current secret: nginx checking
// the bearer token, Redis ACL passwords, s3rver's signature check. The
// client follows a token file, a Redis password file and an S3 credentials
// file when they change, and asks its token command again when the server
// refuses what the command gave before.

#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "kcache/remote/remote.hpp"
#include "redis_server.hpp"
#include "remote_support.hpp"
#include "s3_server.hpp"

namespace kcache::test {
namespace {

using remote::RemoteErrc;

class Rotation : public TempDirTest {
  protected:
    std::unique_ptr<remote::Client> client(const remote::Settings& s) {
        auto c = remote::Client::open(s);
        EXPECT_TRUE(c) << c.error().message;
        return c ? std::move(*c) : nullptr;
    }
    // Replaces `name` by rename, as secret managers do.
    void rotate(const std::string& name, const std::string& text) const {
        std::ofstream(dir() / (name + ".new"), std::ios::trunc) << text;
        std::filesystem::rename(dir() / (name + ".new"), dir() / name);
    }
    std::size_t lines(const std::string& name) const { return line_count(dir() / name); }
    // A command that notes each run in `runs` and prints the file `tok`.
    std::string printing_command() const {
        return token_command_printing(dir() / "tok", dir() / "runs");
    }
    bool upload(remote::Client& c, int n) {
        auto up = c.upload(made_up_fields(n), made_up_bytes(n), made_up_provenance());
        EXPECT_TRUE(up) << n << ": " << up.error().message;
        return static_cast<bool>(up);
    }
};

// nginx with a bearer-token check; the client's settings for it.
class BearerRotation : public Rotation {
  protected:
    void SetUp() override {
        Rotation::SetUp();
        NginxOptions o;
        o.bearer_token = "alpha";
        server_ = start_nginx(dir() / "nginx", o);
        ASSERT_TRUE(server_);
    }
    remote::Settings settings() const {
        remote::Settings s = test_settings(server_->url(), dir() / "state");
        s.plain_http_token = remote::PlainHttpToken::allow;  // loopback
        return s;
    }
    std::optional<NginxServer> server_;
};

TEST_F(BearerRotation, ALongLivedClientFollowsARotatedTokenFile) {
    rotate("token", "alpha\n");
    auto s = settings();
    s.token_file = dir() / "token";
    auto c = client(s);
    ASSERT_TRUE(c);
    ASSERT_TRUE(upload(*c, 1));

    ASSERT_TRUE(server_->accept_only_token("beta"));
    // The file not rotated yet: the server refuses the old token, a counted failure.
    auto refused = c->upload(made_up_fields(2), made_up_bytes(2), made_up_provenance());
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, RemoteErrc::http_status);
    EXPECT_NE(refused.error().message.find("401"), std::string::npos) << refused.error().message;

    rotate("token", "beta\n");
    EXPECT_TRUE(upload(*c, 3));
    auto got = c->fetch(made_up_fields(1));
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->bytes, made_up_bytes(1));
    EXPECT_EQ(c->counters().uploads, 2u);
    EXPECT_EQ(c->counters().upload_failures, 1u);
}

TEST_F(BearerRotation, ATokenCommandIsAskedAgainWhenTheServerRefusesItsToken) {
    rotate("tok", "alpha\n");
    auto s = settings();
    s.token_command = printing_command();
    s.token_lifetime = std::chrono::hours(1);  // only a refusal makes it run again
    auto c = client(s);
    ASSERT_TRUE(c);
    for (int n = 0; n < 3; ++n) {
        ASSERT_TRUE(upload(*c, n));
    }
    EXPECT_EQ(lines("runs"), 1u);

    ASSERT_TRUE(server_->accept_only_token("beta"));
    rotate("tok", "beta\n");  // what the identity provider now hands out
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // the command's rerun gap
    EXPECT_TRUE(upload(*c, 10));  // refused with alpha, sent again with beta
    EXPECT_EQ(lines("runs"), 2u);
    for (int n = 0; n < 3; ++n) {
        EXPECT_TRUE(c->fetch(made_up_fields(n))) << n;
    }
    EXPECT_EQ(lines("runs"), 2u);
    const remote::Counters k = c->counters();
    EXPECT_EQ(k.upload_failures, 0u);
    EXPECT_EQ(k.errors, 0u);
    std::size_t refusals = 0;
    for (const std::string& line : server_->requests()) {
        refusals += line.rfind("PUT", 0) == 0 && line.ends_with(" 401") ? 1 : 0;
    }
    EXPECT_EQ(refusals, 1u);  // one PUT refused, once
}

// Redis with an ACL user whose password the operator changes.
class RedisRotation : public Rotation {
  protected:
    void SetUp() override {
        Rotation::SetUp();
        RedisOptions o;
        o.config = {
            "user kc on >alpha ~kcache/* resetchannels -@all +exists +strlen +getrange "
            "+set +del +select"};
        auto s = RedisServer::start(dir() / "redis", o);
        ASSERT_TRUE(s) << s.error();
        server_.emplace(std::move(*s));
    }
    remote::Settings settings() const {
        remote::Settings s = test_settings(
            "redis://kc@127.0.0.1:" + std::to_string(server_->port()), dir() / "state");
        s.plain_http_token = remote::PlainHttpToken::allow;  // loopback
        return s;
    }
    // The operator's rotation: the new password only, and kc's connections closed.
    void change_password(const std::string& password) {
        ASSERT_TRUE(server_->cli({"ACL", "SETUSER", "kc", "resetpass", ">" + password}));
        ASSERT_TRUE(server_->cli({"CLIENT", "KILL", "USER", "kc"}));
    }
    std::optional<RedisServer> server_;
};

TEST_F(RedisRotation, ARotatedPasswordFileIsUsedForTheNextLogIn) {
    rotate("password", "alpha\n");
    auto s = settings();
    s.token_file = dir() / "password";
    auto c = client(s);
    ASSERT_TRUE(c);
    ASSERT_TRUE(upload(*c, 1));

    change_password("beta");
    auto refused = c->fetch(made_up_fields(1));  // the old password: WRONGPASS
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("WRONGPASS"), std::string::npos)
        << refused.error().message;

    rotate("password", "beta\n");
    auto got = c->fetch(made_up_fields(1));
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->bytes, made_up_bytes(1));
    EXPECT_TRUE(upload(*c, 2));
}

TEST_F(RedisRotation, APasswordCommandIsAskedAgainAfterWrongpass) {
    rotate("tok", "alpha\n");
    auto s = settings();
    s.token_command = printing_command();
    s.token_lifetime = std::chrono::hours(1);
    auto c = client(s);
    ASSERT_TRUE(c);
    ASSERT_TRUE(upload(*c, 1));
    EXPECT_EQ(lines("runs"), 1u);

    change_password("beta");
    rotate("tok", "beta\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    auto got = c->fetch(made_up_fields(1));  // log-in refused with alpha, then beta
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(lines("runs"), 2u);
    EXPECT_EQ(c->counters().errors, 0u);
}

TEST_F(Rotation, AnS3ClientFollowsARotatedCredentialsFile) {
    auto started = S3Server::start(dir() / "s3rver");
    ASSERT_TRUE(started) << started.error();
    S3Server& server = *started;
    auto s = test_settings("s3://" + server.bucket() + "/fleet", dir() / "state");
    s.s3.endpoint = server.endpoint();
    s.s3.credentials_file = dir() / "credentials";
    const auto keys = [&](const std::string& secret) {
        rotate("credentials",
               "[default]\naws_access_key_id = " + std::string(S3Server::kAccessKeyId) +
                   "\naws_secret_access_key = " + secret + "\n");
    };
    keys("rotated-out-secret");
    auto c = client(s);
    ASSERT_TRUE(c);
    auto refused = c->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance());
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("SignatureDoesNotMatch"), std::string::npos)
        << refused.error().message;

    keys(S3Server::kSecret);
    EXPECT_TRUE(upload(*c, 1));
    auto got = c->fetch(made_up_fields(1));
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->bytes, made_up_bytes(1));
}

}  // namespace
}  // namespace kcache::test
