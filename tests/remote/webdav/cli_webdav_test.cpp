// The CLI and the remote tier against a strict WebDAV server, a real Apache
// httpd with mod_dav started by each test: a PUT into a collection that does
// not exist gets 409, so the client makes the collections (MKCOL) and puts
// again; warm and push upload every object, a cold node gets them all and
// builds nothing, and the node's next process hits locally; a location that
// refuses writes costs nothing that was stored.

#include <gtest/gtest.h>

#include "apache_server.hpp"
#include "remote_support.hpp"
#include "signed_cli.hpp"

namespace kcache::test {
namespace {

class RemoteWebDav : public SignedCliTest {
  protected:
    void SetUp() override {
        SignedCliTest::SetUp();
        start({});
    }
    void start(const ApacheOptions& options) {
        server_.reset();
        auto s = ApacheServer::start(dir() / "apache", options);
        ASSERT_TRUE(s) << s.error();
        server_.emplace(std::move(*s));
    }
    std::string remote() const { return "KCACHE_REMOTE=" + server_->url(); }
    // How many `<2 hex>/` collections hold objects on the server.
    std::size_t shard_collections() const {
        std::size_t n = 0;
        for (const auto& e : std::filesystem::directory_iterator(server_->root() / "kcache/v1")) {
            n += e.is_directory() ? 1 : 0;
        }
        return n;
    }
    // A node with its own empty store pulls everything, then warm builds nothing.
    void cold_node_gets_all(int built) {
        const std::string cold = "KCACHE_DIR=" + (dir() / "cold").string();
        const CliRun pull =
            kcache({"pull", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote(), cold});
        ASSERT_EQ(pull.code, 0) << pull.out << pull.err;
        EXPECT_EQ(pull.json()["pulled"], built);
        EXPECT_EQ(pull.json()["failed"], 0);
        const CliRun warm =
            kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote(), cold});
        ASSERT_EQ(warm.code, 0) << warm.out << warm.err;
        EXPECT_EQ(warm.json()["built"], 0);
        EXPECT_EQ(warm.json()["already_cached"], built);
    }
    std::optional<ApacheServer> server_;
};

TEST_F(RemoteWebDav, WarmUploadsEveryObjectAndAColdNodeBuildsNothing) {
    const CliRun warm =
        kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote()});
    ASSERT_EQ(warm.code, 0) << warm.out << warm.err;
    const int built = warm.json()["built"];
    ASSERT_GE(built, 1);
    EXPECT_EQ(warm.json()["remote_uploads"], built) << warm.err;
    EXPECT_EQ(warm.json()["remote_upload_failures"], 0);
    EXPECT_GE(server_->count("MKCOL"), 3u);  // kcache/, kcache/v1/, one <2 hex>/ at least
    cold_node_gets_all(built);
}

TEST_F(RemoteWebDav, PushMakesEachCollectionOnceThenPutsOnce) {
    const CliRun warm = kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"});
    ASSERT_EQ(warm.code, 0) << warm.out << warm.err;
    const int built = warm.json()["built"];
    ASSERT_GE(built, 1);

    const CliRun push = kcache({"push", "--json"}, {remote()});
    ASSERT_EQ(push.code, 0) << push.out << push.err;
    EXPECT_EQ(push.json()["uploaded"], built);
    EXPECT_EQ(push.json()["failed"], 0);
    // One 409 and one MKCOL per new <2 hex>/, kcache/ and kcache/v1/ made
    // once; every other object is one PUT.
    const std::size_t shards = shard_collections();
    EXPECT_EQ(server_->count("MKCOL"), shards + 2);
    EXPECT_EQ(server_->count("PUT"), static_cast<std::size_t>(built) + shards);

    const CliRun again = kcache({"push", "--json"}, {remote()});
    ASSERT_EQ(again.code, 0) << again.out << again.err;
    EXPECT_EQ(again.json()["already present"], built);
    EXPECT_EQ(server_->count("PUT"), static_cast<std::size_t>(built) + shards);
    cold_node_gets_all(built);
}

TEST_F(RemoteWebDav, FleetWarmerUploadsAColdNodeBuildsNothingItsNextProcessHitsLocally) {
    const std::vector<std::string> warm_args{"warm",     "--kernels", "dot",
                                             "--dtypes", "f32",       "--json"};
    const CliRun warmer = kcache(warm_args, {remote(), "KCACHE_DIR=" + (dir() / "ci").string()});
    ASSERT_EQ(warmer.code, 0) << warmer.out << warmer.err;
    const int built = warmer.json()["built"];
    ASSERT_GE(built, 1);
    EXPECT_EQ(warmer.json()["remote_uploads"], built);

    // A node with an empty store: every variant from the server, no compile.
    const std::string node = "KCACHE_DIR=" + (dir() / "node").string();
    const std::size_t gets_before = server_->count("GET", 200);
    const CliRun cold = kcache(warm_args, {remote(), node});
    ASSERT_EQ(cold.code, 0) << cold.out << cold.err;
    EXPECT_EQ(cold.json()["built"], 0);
    EXPECT_EQ(cold.json()["already_cached"], built);
    EXPECT_EQ(server_->count("GET", 200), gets_before + static_cast<std::size_t>(built));

    // The node's next process finds everything in its own store: no request.
    const std::size_t requests = server_->count("GET") + server_->count("HEAD");
    const CliRun next = kcache(warm_args, {remote(), node});
    ASSERT_EQ(next.code, 0) << next.out << next.err;
    EXPECT_EQ(next.json()["built"], 0);
    EXPECT_EQ(next.json()["already_cached"], built);
    EXPECT_EQ(server_->count("GET") + server_->count("HEAD"), requests);
    const CliRun stats = kcache({"stats", "--json"}, {node});
    ASSERT_EQ(stats.code, 0) << stats.err;
    EXPECT_EQ(stats.json()["remote"]["hits"], built);
}

TEST_F(RemoteWebDav, AReadOnlyLocationRefusesPutsClearlyAndNothingStoredIsLost) {
    start({.read_only = true, .writers_file = std::nullopt});
    const CliRun warm = kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"});
    ASSERT_EQ(warm.code, 0) << warm.out << warm.err;
    const int built = warm.json()["built"];
    ASSERT_GE(built, 1);

    const CliRun push = kcache({"push", "--json"}, {remote()});
    EXPECT_EQ(push.code, 1) << push.out << push.err;  // push's job is uploading
    EXPECT_EQ(push.json()["uploaded"], 0);
    EXPECT_EQ(push.json()["failed"], built);
    EXPECT_NE(push.err.find("HTTP 403"), std::string::npos) << push.err;
    EXPECT_EQ(server_->count("PUT", 403), static_cast<std::size_t>(built));
    EXPECT_EQ(server_->count("MKCOL"), 0u);  // a refusal is not a missing collection
    // A refused write says nothing about the server being down.
    EXPECT_TRUE(down_marks(store_dir()).empty());

    const CliRun again =
        kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote()});
    ASSERT_EQ(again.code, 0) << again.out << again.err;
    EXPECT_EQ(again.json()["built"], 0);
    EXPECT_EQ(again.json()["already_cached"], built);
    const CliRun stats = kcache({"stats", "--json"});
    ASSERT_EQ(stats.code, 0) << stats.err;
    EXPECT_EQ(stats.json()["entries"], built);
}

}  // namespace
}  // namespace kcache::test
