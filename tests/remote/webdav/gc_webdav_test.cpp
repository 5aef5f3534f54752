// `kcache remote gc` on real WebDAV servers: Apache httpd (mod_dav) and
// rclone serve webdav, which both report an object's getlastmodified from
// its file's mtime, so objects are made old by setting the mtime of their
// files in the served root (what an object uploaded 40 days ago looks like
// to the server). rclone keeps what it learnt of a file while it runs, so
// it is restarted on the same root after that, as it would have been in 40
// days. Two namespaces and the default layout hold old and new
// objects; gc of one namespace lists exactly its objects, a dry run removes
// nothing, a real run removes only that namespace's old ones. nginx's own dav
// module has no PROPFIND: gc says so and removes nothing; with the dav-ext
// module loaded it lists, and gc works as on the others.

#include <gtest/gtest.h>

#include "apache_server.hpp"
#include "cli_runner.hpp"
#include "namespace_support.hpp"
#include "rclone_server.hpp"

namespace kcache::test {
namespace {

constexpr auto kOld = std::chrono::hours(40 * 24);

class RemoteGcWebDav : public CliTest {
  protected:
    // Entries 1 (old) and 2 (new) in team-a, 3 (old) in team-b, 4 (old) in
    // the default layout, uploaded to `url` whose files are under `root`.
    void fill(const std::string& url, const std::filesystem::path& root) {
        auto a = open(url, "a", "team-a");
        auto b = open(url, "b", "team-b");
        auto plain = remote::Client::open(test_settings(url, dir() / "plain"));
        ASSERT_TRUE(a && b && plain);
        for (auto [c, n] : {std::pair{a.get(), 1}, {a.get(), 2}, {b.get(), 3}, {plain->get(), 4}}) {
            auto up = c->upload(made_up_fields(n), made_up_bytes(n, 1024), made_up_provenance());
            ASSERT_TRUE(up) << up.error().message;
        }
        for (const auto& file : {root / object_in("team-a", 1), root / object_in("team-b", 3),
                                 root / object_in("", 4)}) {
            make_old(file, kOld);
        }
    }
    std::unique_ptr<remote::Client> open(const std::string& url, const std::string& state,
                                         const std::string& name) {
        auto c = remote::Client::open(namespace_settings(url, dir() / state, test_signing_key(),
                                                         {trusting(name, {test_signing_key()})}));
        EXPECT_TRUE(c) << c.error().message;
        return c ? std::move(*c) : nullptr;
    }
    CliRun gc(const std::string& url, std::vector<std::string> args) {
        args.insert(args.begin(), {"remote", "gc", "--namespace", "team-a", "--json"});
        return kcache(args, {"KCACHE_REMOTE=" + url});
    }
    // The dry run, then the real run, of gc --older-than 30d on team-a (after fill()).
    void collects_only_old_objects_of_one_namespace(const std::string& url,
                                                    const std::filesystem::path& root) {
        const CliRun dry = gc(url, {"--older-than", "30d", "--dry-run"});
        ASSERT_EQ(dry.code, 0) << dry.out << dry.err;
        EXPECT_EQ(dry.json()["listed"], 2) << dry.out;
        EXPECT_EQ(dry.json()["old"], 1);
        EXPECT_EQ(dry.json()["removed"], 0);
        const std::string old_key = store::make_key(made_up_fields(1)).hex();
        for (const auto& o : dry.json()["objects"]) {
            const bool is_old = o["url"].get<std::string>().find(old_key) != std::string::npos;
            EXPECT_EQ(o["outcome"], is_old ? "would_remove" : "kept") << o.dump();
            EXPECT_EQ(o["url"].get<std::string>().find("/kcache/ns/team-a/v1/"), url.size());
            EXPECT_GT(o["age_s"].get<long long>(), is_old ? 39 * 86'400 : -1) << o.dump();
        }
        EXPECT_NE(dry.err.find("would remove"), std::string::npos) << dry.err;
        for (int n : {1, 2}) {
            EXPECT_TRUE(std::filesystem::exists(root / object_in("team-a", n))) << n;
        }
        const CliRun real = gc(url, {"--older-than", "30d"});
        ASSERT_EQ(real.code, 0) << real.out << real.err;
        EXPECT_EQ(real.json()["removed"], 1) << real.out;
        EXPECT_EQ(real.json()["failed"], 0);
        EXPECT_FALSE(std::filesystem::exists(root / object_in("team-a", 1)));
        EXPECT_TRUE(std::filesystem::exists(root / object_in("team-a", 2)));
        EXPECT_TRUE(
            std::filesystem::exists(root / object_in("team-b", 3)));    // old, other namespace
        EXPECT_TRUE(std::filesystem::exists(root / object_in("", 4)));  // old, default layout
        // What is left is listed and kept; the text summary names the counts.
        const CliRun again = kcache({"remote", "gc", "--namespace", "team-a", "--older-than", "1s"},
                                    {"KCACHE_REMOTE=" + url});
        EXPECT_EQ(again.code, 0) << again.err;
        EXPECT_NE(again.out.find("1 listed, 0 older than 1 s, 0 removed, 0 failed"),
                  std::string::npos)
            << again.out;
    }
};

TEST_F(RemoteGcWebDav, ApacheRemovesOnlyTheOldObjectsOfTheNamespace) {
    auto s = ApacheServer::start(dir() / "apache");
    ASSERT_TRUE(s) << s.error();
    fill(s->url(), s->root());
    collects_only_old_objects_of_one_namespace(s->url(), s->root());
}

TEST_F(RemoteGcWebDav, RcloneRemovesOnlyTheOldObjectsOfTheNamespace) {
    auto first = RcloneServer::start(dir() / "rclone");
    ASSERT_TRUE(first) << first.error();
    fill(first->url(), first->root());
    first->stop();
    auto s = RcloneServer::start(dir() / "rclone");
    ASSERT_TRUE(s) << s.error();
    collects_only_old_objects_of_one_namespace(s->url(), s->root());
}

TEST_F(RemoteGcWebDav, ANamespaceNeverWrittenListsNothing) {
    auto s = ApacheServer::start(dir() / "apache");
    ASSERT_TRUE(s) << s.error();
    const CliRun r = gc(s->url(), {"--older-than", "1d"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.json()["listed"], 0);
}

TEST_F(RemoteGcWebDav, NginxWithDavExtRemovesOnlyTheOldObjectsOfTheNamespace) {
    NginxOptions o;
    o.propfind = true;
    auto s = start_nginx(dir() / "nginx", o);
    ASSERT_TRUE(s);
    fill(s->url(), s->root());
    collects_only_old_objects_of_one_namespace(s->url(), s->root());
}

TEST_F(RemoteGcWebDav, PlainNginxCannotListAndNothingIsRemoved) {
    auto s = start_nginx(dir() / "nginx");
    ASSERT_TRUE(s);
    fill(s->url(), s->root());
    const CliRun r = gc(s->url(), {"--older-than", "30d"});
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.err.find("PROPFIND"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("dav-ext"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nothing removed"), std::string::npos) << r.err;
    EXPECT_TRUE(std::filesystem::exists(s->root() / object_in("team-a", 1)));
}

// The node's counters per namespace, as kcache stats shows them.
TEST_F(RemoteGcWebDav, StatsShowTheCountersOfEachNamespace) {
    auto s = ApacheServer::start(dir() / "apache");
    ASSERT_TRUE(s) << s.error();
    fill(s->url(), s->root());
    {
        auto c = remote::Client::open(namespace_settings(
            s->url(), store_dir(), test_signing_key(),
            {trusting("team-b", {test_signing_key()}), trusting("team-a", {test_signing_key()})}));
        ASSERT_TRUE(c) << c.error().message;
        EXPECT_TRUE((*c)->fetch(made_up_fields(1)));  // a miss in team-b, a hit in team-a
    }
    const CliRun j = kcache({"stats", "--json"});
    ASSERT_EQ(j.code, 0) << j.err;
    EXPECT_EQ(j.json()["remote"]["hits"], 1) << j.out;
    EXPECT_EQ(j.json()["remote_namespaces"]["team-a"]["hits"], 1) << j.out;
    EXPECT_EQ(j.json()["remote_namespaces"]["team-b"]["misses"], 1) << j.out;
    const CliRun text = kcache({"stats"});
    EXPECT_NE(text.out.find("remote ns team-b: builder_hits 0 corrupt 0 errors 0 hits 0 misses 1"),
              std::string::npos)
        << text.out;
    const CliRun m = kcache({"stats", "--format", "openmetrics"});
    EXPECT_NE(
        m.out.find("kcache_remote_namespace_lookups_total{namespace=\"team-a\",result=\"hit\"} 1"),
        std::string::npos)
        << m.out;
}

TEST_F(RemoteGcWebDav, UsageErrorsAreExplained) {
    const std::vector<std::vector<std::string>> bad = {
        {"remote"},
        {"remote", "list"},
        {"remote", "gc", "--older-than", "1d"},
        {"remote", "gc", "--namespace", "team-a"},
        {"remote", "gc", "--namespace", "Team A", "--older-than", "1d"},
        {"remote", "gc", "--namespace", "team-a", "--older-than", "soon"}};
    for (const auto& args : bad) {
        const CliRun r = kcache(args, {"KCACHE_REMOTE=http://127.0.0.1:9"});
        EXPECT_EQ(r.code, 2) << args.back() << ": " << r.err;
    }
    const CliRun none = kcache({"remote", "gc", "--namespace", "a", "--older-than", "1d"});
    EXPECT_EQ(none.code, 2);
    EXPECT_NE(none.err.find("KCACHE_REMOTE"), std::string::npos) << none.err;
    const CliRun help = kcache({"remote", "--help"});
    EXPECT_EQ(help.code, 0);
    EXPECT_NE(help.out.find("--older-than"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace kcache::test
