// The process log sink: with a handler set, every diagnostic of every module
// reaches the handler and nothing reaches stderr (a bad pack, a pack refused
// by the signature policy, a trusted key that cannot be read, a corrupt
// entry, a remote that is down, a compile stopped at its deadline); a
// handler gets the levels it asks for, and without one stderr gets what
// KCACHE_LOG_LEVEL names.

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "cache_fixture.hpp"
#include "kcache/common/log.hpp"
#include "kcache/kcache.h"
#include "kcache/store/store.hpp"

namespace kcache::test {
namespace {

// Sends this process's stderr (fd 2) to a file until destroyed.
class StderrToFile {
  public:
    explicit StderrToFile(const std::filesystem::path& file)
        : saved_(::dup(STDERR_FILENO)), path_(file) {
        const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ::dup2(fd, STDERR_FILENO);
        ::close(fd);
    }
    ~StderrToFile() { restore(); }
    // Puts stderr back and returns what was written to it meanwhile.
    std::string restore() {
        if (saved_ >= 0) {
            std::fflush(stderr);
            ::dup2(saved_, STDERR_FILENO);
            ::close(saved_);
            saved_ = -1;
        }
        std::ifstream in(path_);
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
    }

  private:
    int saved_;
    std::filesystem::path path_;
};

class ServiceLogSink : public CacheTest {
  protected:
    void TearDown() override { set_log_handler(nullptr); }
    bool logged(const std::string& text) {
        std::lock_guard lock(mu_);
        for (const auto& m : messages_) {
            if (m.find(text) != std::string::npos) {
                return true;
            }
        }
        return false;
    }
    std::string all() {
        std::lock_guard lock(mu_);
        std::string out;
        for (const auto& m : messages_) {
            out += m + "\n";
        }
        return out;
    }
    void start_capture() {
        set_log_handler([this](LogLevel, std::string_view m) {
            std::lock_guard lock(mu_);
            messages_.emplace_back(m);
        });
    }
    std::mutex mu_;
    std::vector<std::string> messages_;
};

TEST_F(ServiceLogSink, WithAHandlerSetNothingReachesStderr) {
    // An entry to corrupt, and a pack (unsigned) made from a store holding it.
    {
        auto c = config("builder");
        c.max_hot_bytes = 0;  // the damaged blob must be the only copy
        auto cache = open(c);
        ASSERT_TRUE(cache);
        ASSERT_TRUE(cache->program(context_, device_, scale_request(3)).ok());
    }
    const auto unsigned_pack = dir() / "unsigned.kcpack";
    {
        auto builder = store::Store::open(dir() / "builder");
        ASSERT_TRUE(builder);
        ASSERT_TRUE(builder->export_pack(unsigned_pack));
    }
    const std::string damage = "sqlite3 '" + (dir() / "builder" / "store.sqlite").string() +
                               "' 'UPDATE blobs SET data = randomblob(length(data))'";
    ASSERT_EQ(std::system(damage.c_str()), 0);
    const auto bad_pack = dir() / "bad.kcpack";
    std::ofstream(bad_pack) << "not a pack";

    StderrToFile err(dir() / "stderr.txt");
    start_capture();
    // What a fail_fast request for the scale kernel gets from a cache on `c`.
    const auto fail_fast = [&](const Config& c) {
        auto cache = open(c);
        auto r = scale_request(3);
        r.mode = Mode::fail_fast;
        return cache ? cache->program(context_, device_, r).outcome().status
                     : StatusCode::internal_error;
    };
    auto with_bad_pack = config("fresh");  // a bad pack
    with_bad_pack.packs = {bad_pack};
    EXPECT_EQ(fail_fast(with_bad_pack), StatusCode::not_cached);
    auto under_policy = config("fresh-policy");  // an unsigned pack, an unreadable key
    under_policy.packs = {unsigned_pack};
    under_policy.require_signed_packs = true;
    under_policy.trusted_keys = {dir() / "missing.pub"};
    EXPECT_EQ(fail_fast(under_policy), StatusCode::not_cached);
    auto corrupt = config("builder");  // a corrupt entry in the user store
    corrupt.max_hot_bytes = 0;
    EXPECT_NE(fail_fast(corrupt), StatusCode::ok);
    {  // a remote that is down, and a compile stopped at its deadline
        auto c = config("remote");
        c.remote_urls = {"http://127.0.0.1:9"};
        c.remote_connect_timeout = std::chrono::milliseconds(200);
        auto cache = open(c);
        ASSERT_TRUE(cache);
        SourceRequest slow;
        slow.source = nested_macro_kernel(17);
        slow.deadline = std::chrono::milliseconds(300);
        EXPECT_EQ(cache->program(context_, device_, slow).outcome().status, StatusCode::timeout);
        EXPECT_TRUE(cache->program(context_, device_, scale_request(4)).ok());
    }
    const std::string on_stderr = err.restore();
    EXPECT_EQ(on_stderr, "") << "reached stderr with a handler set";
    EXPECT_TRUE(logged("skipping pack " + bad_pack.string())) << all();
    EXPECT_TRUE(logged(unsigned_pack.string())) << all();
    EXPECT_TRUE(logged("trusted keys: cannot be read")) << all();
    EXPECT_TRUE(logged("corrupt entry")) << all();
    EXPECT_TRUE(logged("remote server http://127.0.0.1:9 is down")) << all();
}

// One message of each level, in the order error, warning, info, debug.
void say_each_level() {
    logging::error("e");
    logging::warning("w");
    logging::info("i");
    logging::debug("d");
}

TEST(LogLevels, AHandlerGetsWarningsAndErrorsUnlessItAsksForMore) {
    std::string got;
    const auto collect = [&](LogLevel level, std::string_view m) {
        got += std::string(m) + std::to_string(static_cast<int>(level)) + " ";
    };
    set_log_handler(collect);
    say_each_level();
    EXPECT_EQ(got, "e1 w0 ");
    got.clear();
    set_log_handler(collect, LogLevel::info);
    say_each_level();
    EXPECT_EQ(got, "e1 w0 i2 ");
    got.clear();
    set_log_handler(collect, LogLevel::error);
    say_each_level();
    EXPECT_EQ(got, "e1 ");
    got.clear();
    set_log_handler(collect, LogLevel::debug);
    EXPECT_TRUE(logging::enabled(logging::Level::debug));
    say_each_level();
    EXPECT_EQ(got, "e1 w0 i2 d3 ");
    set_log_handler(nullptr);
}

TEST(LogLevels, TheCApisHandlersKeepTheirContractAndV3AsksForMore) {
    std::string got;
    const kcache_log_handler collect = [](kcache_log_level level, const char* m, void* user) {
        *static_cast<std::string*>(user) += std::string(m) + std::to_string(level) + " ";
    };
    kcache_set_log_handler(collect, &got);
    say_each_level();
    EXPECT_EQ(got, "e1 w0 ");
    got.clear();
    kcache_set_log_handler_v2(collect, &got, nullptr);
    say_each_level();
    EXPECT_EQ(got, "e1 w0 ");
    got.clear();
    kcache_set_log_handler_v3(collect, &got, nullptr, KCACHE_LOG_INFO);
    say_each_level();
    EXPECT_EQ(got, "e1 w0 i2 ");
    got.clear();
    kcache_set_log_handler_v3(collect, &got, nullptr, static_cast<kcache_log_level>(42));
    say_each_level();
    EXPECT_EQ(got, "e1 w0 ") << "a value that is no level is warning";
    kcache_set_log_handler(nullptr, nullptr);
}

TEST_F(ServiceLogSink, WithoutAHandlerStderrGetsWarningsAndErrors) {
    StderrToFile err(dir() / "stderr.txt");
    say_each_level();
    EXPECT_EQ(err.restore(), "kcache: error: e\nkcache: warning: w\n");
}

}  // namespace
}  // namespace kcache::test
