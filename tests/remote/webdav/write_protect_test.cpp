// The recipe of docs/remote.md for a server the fleet reads anonymously and
// only writers may write (Basic authentication of every method but the
// reads), on nginx (limit_except GET HEAD with auth_basic) and Apache httpd
// mod_dav (Require method … or valid-user), with the writers' credentials
// in ~/.netrc (KCACHE_REMOTE_NETRC). A long-lived writer follows a
// rotated password: the server's htpasswd and the writer's netrc change,
// and the same client's next upload is accepted.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

#include "apache_server.hpp"
#include "kcache/remote/remote.hpp"
#include "redis_server.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

using remote::RemoteErrc;

class WriteProtect : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        // libcurl reads $HOME/.netrc at each request; this process is this test's own.
        ::setenv("HOME", dir().c_str(), 1);
        set_password("first-secret");
    }
    // The server's htpasswd (apr1, which nginx and Apache both read) and the
    // writer's ~/.netrc, both for user `ci`.
    void set_password(const std::string& password) { set_passwords(password, password); }
    void set_passwords(const std::string& server, const std::string& writer) {
        auto hash = run_program({"openssl", "passwd", "-apr1", server});
        ASSERT_TRUE(hash) << hash.error();
        std::ofstream(writers(), std::ios::trunc) << "ci:" << *hash;
        std::ofstream(dir() / ".netrc", std::ios::trunc)
            << "machine 127.0.0.1 login ci password " << writer << "\n";
    }
    std::filesystem::path writers() const { return dir() / "writers.htpasswd"; }
    std::unique_ptr<remote::Client> client(const std::string& url, bool netrc) {
        remote::Settings s = test_settings(url, dir() / "state");
        s.netrc = netrc;
        auto c = remote::Client::open(s);
        EXPECT_TRUE(c) << c.error().message;
        return c ? std::move(*c) : nullptr;
    }
    // What every server of the recipe must do, at `url`.
    void anonymous_reads_authenticated_writes(const std::string& url);
};

void WriteProtect::anonymous_reads_authenticated_writes(const std::string& url) {
    auto writer = client(url, true);
    auto stranger = client(url, false);
    ASSERT_TRUE(writer && stranger);
    for (int n = 0; n < 3; ++n) {
        auto up = writer->upload(made_up_fields(n), made_up_bytes(n), made_up_provenance());
        ASSERT_TRUE(up) << n << ": " << up.error().message;
    }
    auto refused = stranger->upload(made_up_fields(9), made_up_bytes(9), made_up_provenance());
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, RemoteErrc::http_status);
    EXPECT_NE(refused.error().message.find("401"), std::string::npos) << refused.error().message;
    for (int n = 0; n < 3; ++n) {  // anyone reads
        auto got = stranger->fetch(made_up_fields(n));
        ASSERT_TRUE(got) << n << ": " << got.error().message;
        EXPECT_EQ(got->bytes, made_up_bytes(n));
    }
    EXPECT_TRUE(down_marks(dir() / "state").empty());  // a refusal is no down server

    set_passwords("second-secret", "first-secret");  // the server rotated, the writer not yet
    auto stale = writer->upload(made_up_fields(4), made_up_bytes(4), made_up_provenance());
    ASSERT_FALSE(stale);
    EXPECT_NE(stale.error().message.find("401"), std::string::npos) << stale.error().message;
    set_password("second-secret");  // the writer's netrc too: the same client writes again
    auto again = writer->upload(made_up_fields(4), made_up_bytes(4), made_up_provenance());
    EXPECT_TRUE(again) << again.error().message;
    EXPECT_TRUE(stranger->fetch(made_up_fields(4)));
}

TEST_F(WriteProtect, NginxServesAnonymousReadsAndAuthenticatedWrites) {
    NginxOptions o;
    o.writers_file = writers();
    auto server = start_nginx(dir() / "nginx", o);
    ASSERT_TRUE(server);
    anonymous_reads_authenticated_writes(server->url());
}

TEST_F(WriteProtect, ApacheServesAnonymousReadsAndAuthenticatedWrites) {
    ApacheOptions o;
    o.writers_file = writers();
    auto server = ApacheServer::start(dir() / "apache", o);
    ASSERT_TRUE(server) << server.error();
    anonymous_reads_authenticated_writes(server->url());
    EXPECT_GE(server->count("MKCOL", 201), 1u);  // the writer made its collections
}

}  // namespace
}  // namespace kcache::test
