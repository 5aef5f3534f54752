// Two kcache processes on one store (cli_concurrency_fixture.hpp) with pull
// as the writer: a warmer uploads signed objects to a loopback nginx, and
// pull stores them on an existing store while another process runs each
// reading command and the sqlite3 shell.

#include <gtest/gtest.h>

#include "cli_concurrency_fixture.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

class CliConcurrencyRemote : public CliConcurrency {
  protected:
    void SetUp() override {
        CliConcurrency::SetUp();
        server_ = start_nginx(dir() / "nginx");
        ASSERT_TRUE(server_);
        env_ = signing_env(dir() / "keys");
        env_.push_back("KCACHE_REMOTE=" + server_->url());
    }
    // kcache with the remote and the test key (signs uploads, trusted).
    CliRun kcache_remote(const std::vector<std::string>& args,
                         const std::vector<std::string>& more = {}) {
        std::vector<std::string> env = env_;
        env.insert(env.end(), more.begin(), more.end());
        return kcache(args, env);
    }
    std::optional<NginxServer> server_;
    std::vector<std::string> env_;
};

TEST_F(CliConcurrencyRemote, PullKeepsEveryEntryItStoredWhileOtherCommandsUseTheStore) {
    // A warmer with a store of its own fills the server.
    const std::string warmer = "KCACHE_DIR=" + (dir() / "warmer").string();
    const CliRun warm = kcache_remote({"warm", "--dtypes", "f32", "--json", "--quiet"}, {warmer});
    ASSERT_EQ(warm.code, 0) << warm.err;
    ASSERT_GE(warm.json()["remote_uploads"].get<int>(), 3) << warm.out;
    ASSERT_EQ(kcache({"stats"}).code, 0);  // this node's store exists

    // One pull per kernel, each while the readers run; twice, the store
    // emptied between the passes (a loss needs a reader's close to fall
    // between the writer's commits and its exit: more pulls, more chances).
    int stored = 0;
    for (int pass = 0; pass < 2; ++pass) {
        if (pass > 0) {
            ASSERT_EQ(kcache({"gc", "--max-size", "0"}).code, 0);
            ASSERT_EQ(rows(), "0");
            stored = 0;
        }
        for (const char* kernel : {"dot", "conv2d", "batchnorm"}) {
            const CliRun pull = with_readers(
                [&] {
                    return kcache_remote(
                        {"pull", "--kernels", kernel, "--dtypes", "f32", "--json"});
                },
                1);
            ASSERT_EQ(pull.code, 0) << pull.err;
            ASSERT_GE(pull.json()["pulled"].get<int>(), 1) << pull.out;
            EXPECT_EQ(pull.json()["rejected"], 0) << pull.err;
            stored += pull.json()["pulled"].get<int>();
            EXPECT_EQ(rows(), std::to_string(stored))
                << "pass " << pass << ", " << kernel << ": pull said " << pull.json()["pulled"]
                << " pulled";
        }
    }
    // Nothing lost: the next pull finds every one of them in the store.
    const CliRun again = kcache_remote({"pull", "--dtypes", "f32", "--json"});
    EXPECT_EQ(again.json()["already local"], stored) << again.out;
    EXPECT_EQ(again.json()["pulled"], 0);
    EXPECT_EQ(kcache({"ls", "--json"}).json().size(), static_cast<std::size_t>(stored));
    EXPECT_EQ(kcache({"verify"}).code, 0);
}

}  // namespace
}  // namespace kcache::test
