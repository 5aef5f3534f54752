// fork() while the parent's upload worker has an object in flight (label
// remote): the child's cache opens a remote client of its own, uploads its
// own compile, and the parent's upload still goes out; a third node then
// hits both on the server. The child runs under a deadline.

#include <gtest/gtest.h>

#include "child_process.hpp"
#include "remote_ladder.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

using std::chrono::milliseconds;

TEST_F(RemoteLadder, AChildForkedDuringABackgroundUploadUploadsItsOwn) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    auto cache = Cache::open(remote_config(config("a"), server->url()));
    ASSERT_TRUE(cache);
    auto parents = cache->program(context_, device_, scale_request(40));
    ASSERT_EQ(parents.outcome().rung, Rung::jit) << parents.outcome().message;
    // No drain: the parent's upload is queued or being sent now.
    const std::string child = in_forked_child(
        [&] {
            auto p = cache->program(context_, device_, scale_request(41));
            cache->drain(milliseconds(20'000));
            const auto s = cache->stats();
            return p.outcome().rung == Rung::jit && s.remote_uploads == 1 ? 0 : 1;
        },
        milliseconds(60'000));
    EXPECT_EQ(child, "exit 0");
    cache->drain(milliseconds(20'000));
    EXPECT_EQ(cache->stats().remote_uploads, 1u);
    auto other = Cache::open(remote_config(config("b"), server->url()));
    ASSERT_TRUE(other);
    for (int salt : {40, 41}) {
        auto p = other->program(context_, device_, scale_request(salt));
        EXPECT_EQ(p.outcome().rung, Rung::remote) << salt << ": " << p.outcome().message;
        EXPECT_FLOAT_EQ(run_scale(context_, device_, p.get(), 1.0f), 2.0f + salt);
    }
}

}  // namespace
}  // namespace kcache::test
