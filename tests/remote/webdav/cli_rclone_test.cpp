// The CLI and the remote tier against `rclone serve webdav`, a real server
// started by each test: it answers a PUT into a collection that does not
// exist with 404, so the client makes the collections (MKCOL) and puts
// again. warm uploads every object, a cold node pulls them all and builds
// nothing, and push of the same store finds every object there.

#include <gtest/gtest.h>

#include "rclone_server.hpp"
#include "remote_support.hpp"
#include "signed_cli.hpp"

namespace kcache::test {
namespace {

class RemoteRclone : public SignedCliTest {
  protected:
    void SetUp() override {
        SignedCliTest::SetUp();
        auto s = RcloneServer::start(dir() / "rclone");
        ASSERT_TRUE(s) << s.error();
        server_.emplace(std::move(*s));
    }
    std::string remote() const { return "KCACHE_REMOTE=" + server_->url(); }
    std::size_t objects_on_disk() const {
        std::size_t n = 0;
        for (const auto& e : std::filesystem::recursive_directory_iterator(server_->root())) {
            n += e.is_regular_file() ? 1 : 0;
        }
        return n;
    }
    std::optional<RcloneServer> server_;
};

TEST_F(RemoteRclone, WarmUploadsEveryObjectAndAColdNodeBuildsNothing) {
    const CliRun warm =
        kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote()});
    ASSERT_EQ(warm.code, 0) << warm.out << warm.err;
    const int built = warm.json()["built"];
    ASSERT_GE(built, 1);
    EXPECT_EQ(warm.json()["remote_uploads"], built) << warm.out;
    EXPECT_EQ(warm.json()["remote_upload_failures"], 0) << warm.out;
    EXPECT_EQ(objects_on_disk(), static_cast<std::size_t>(built));

    const std::string cold = "KCACHE_DIR=" + (dir() / "cold").string();
    const CliRun pull =
        kcache({"pull", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote(), cold});
    ASSERT_EQ(pull.code, 0) << pull.out << pull.err;
    EXPECT_EQ(pull.json()["pulled"], built);
    const CliRun again =
        kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"}, {remote(), cold});
    ASSERT_EQ(again.code, 0) << again.out << again.err;
    EXPECT_EQ(again.json()["built"], 0);

    const CliRun push = kcache({"push", "--json"}, {remote()});
    ASSERT_EQ(push.code, 0) << push.out << push.err;
    EXPECT_EQ(push.json()["already present"], built);
    EXPECT_EQ(push.json()["failed"], 0);
}

// A push of a store into an empty server: every object goes up, into
// collections made on the way.
TEST_F(RemoteRclone, PushIntoAnEmptyServerUploadsEveryEntry) {
    const CliRun warm = kcache({"warm", "--kernels", "dot", "--dtypes", "f32", "--json"});
    ASSERT_EQ(warm.code, 0) << warm.out << warm.err;
    const int built = warm.json()["built"];
    ASSERT_GE(built, 1);
    const CliRun push = kcache({"push", "--json"}, {remote()});
    ASSERT_EQ(push.code, 0) << push.out << push.err;
    EXPECT_EQ(push.json()["uploaded"], built);
    EXPECT_EQ(objects_on_disk(), static_cast<std::size_t>(built));
}

}  // namespace
}  // namespace kcache::test
