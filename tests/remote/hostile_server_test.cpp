// The remote client against servers that answer, but not with objects: a
// HEAD of an object larger than the download cap, a page for every path, a
// HEAD that says yes to everything, and 429/403 with Retry-After.

#include <gtest/gtest.h>

#include <fstream>

#include "kcache/remote/envelope.hpp"
#include "kcache/remote/remote.hpp"
#include "kcache/store/key.hpp"
#include "remote_support.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

using remote::Holding;
using remote::RemoteErrc;

class RemoteHostile : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        server_ = start_nginx(dir() / "nginx");
        ASSERT_TRUE(server_);
    }
    std::unique_ptr<remote::Client> client(const std::string& url) {
        auto s = test_settings(url, dir() / "state");
        s.breaker_window = Millis(1000);
        auto c = remote::Client::open(s);
        EXPECT_TRUE(c) << c.error().message;
        return c ? std::move(*c) : nullptr;
    }
    // The breaker mark's expiry (ms since the epoch), 0 without one.
    long long marked_until() const {
        const auto marks = down_marks(dir() / "state");
        std::ifstream in(marks.empty() ? dir() / "state" / "none" : marks.front());
        long long until = 0;
        return in >> until ? until : 0;
    }
    static long long now_ms() {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
    }
    std::optional<NginxServer> server_;
};

// The size cap bounds bodies received; a HEAD receives none, so a large
// object on the server is "present", not an error.
TEST_F(RemoteHostile, HeadOfAnObjectLargerThanTheCapSaysPresent) {
    auto c = client(server_->url());
    const store::Key key = store::make_key(made_up_fields(1));
    const auto file = server_->object_file(key.hex());
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file).close();
    std::filesystem::resize_file(file, 100ull << 20);  // sparse: 100 MiB over the 64 MiB cap
    auto there = c->exists(key);
    ASSERT_TRUE(there) << there.error().message;
    EXPECT_TRUE(*there);
    // A GET of it is refused by the cap, and counts as something to replace.
    auto held = c->held(made_up_fields(1));
    ASSERT_TRUE(held) << held.error().message;
    EXPECT_EQ(held->holding, Holding::unusable) << held->detail;
}

// What answers 200 but is not the object is told apart from the object.
TEST_F(RemoteHostile, HeldVerifiesTheObjectAHeadOnlyClaims) {
    auto real = client(server_->url());
    ASSERT_TRUE(real->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    auto held = real->held(made_up_fields(1));
    ASSERT_TRUE(held) << held.error().message;
    EXPECT_EQ(held->holding, Holding::verified);
    held = real->held(made_up_fields(2));
    ASSERT_TRUE(held) << held.error().message;
    EXPECT_EQ(held->holding, Holding::absent);

    const auto file = server_->object_file(store::make_key(made_up_fields(1)).hex());
    std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);
    EXPECT_TRUE(*real->exists(store::make_key(made_up_fields(1))));  // HEAD still says yes
    held = real->held(made_up_fields(1));
    ASSERT_TRUE(held) << held.error().message;
    EXPECT_EQ(held->holding, Holding::unusable);

    auto html = client(server_->html_url());
    held = html->held(made_up_fields(1));
    ASSERT_TRUE(held) << held.error().message;
    EXPECT_EQ(held->holding, Holding::unusable);
    auto liar = client(server_->liar_url());
    EXPECT_TRUE(*liar->exists(store::make_key(made_up_fields(3))));
    held = liar->held(made_up_fields(3));
    ASSERT_TRUE(held) << held.error().message;
    EXPECT_EQ(held->holding, Holding::absent);
}

// 429 (and 403 with Retry-After) opens the breaker for the time the server
// asked for, not the configured window, and nothing more is sent meanwhile.
TEST_F(RemoteHostile, RetryAfterOpensTheBreakerForTheTimeAsked) {
    for (const std::string& url : {server_->busy_url(), server_->denied_url()}) {
        std::filesystem::remove_all(dir() / "state");
        const std::size_t before = server_->requests().size();
        auto c = client(url);
        auto got = c->fetch(made_up_fields(1));
        ASSERT_FALSE(got);
        EXPECT_EQ(got.error().code, RemoteErrc::http_status) << got.error().message;
        EXPECT_GE(marked_until(), now_ms() + 100'000) << url;  // Retry-After: 120, window 1 s
        for (int i = 2; i < 5; ++i) {
            got = c->fetch(made_up_fields(i));
            ASSERT_FALSE(got);
            EXPECT_EQ(got.error().code, RemoteErrc::breaker_open) << got.error().message;
        }
        EXPECT_FALSE(c->upload(made_up_fields(5), made_up_bytes(5), made_up_provenance()));
        EXPECT_EQ(server_->requests().size(), before + 1) << url;
    }
}

// A 403 without Retry-After (a server that takes no writes) is no reason to
// stop reading from it.
TEST_F(RemoteHostile, ARefusedWriteWithoutRetryAfterKeepsTheBreakerClosed) {
    NginxOptions read_only;
    read_only.read_only = true;
    auto ro = start_nginx(dir() / "ro", read_only);
    ASSERT_TRUE(ro);
    auto c = client(ro->url());
    EXPECT_FALSE(c->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    EXPECT_EQ(marked_until(), 0);
    auto got = c->fetch(made_up_fields(1));
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, RemoteErrc::not_found);
}

}  // namespace
}  // namespace kcache::test
