// Batches on a real redis-server 7 (what kcache push and pull send):
// fetch_many and upload_many of N objects go out pipelined, in one round
// trip each (the server's own count of socket reads shows it), and every
// object still gets its own answer: one bad value among good ones is a
// counted corrupt miss.

#include <gtest/gtest.h>

#include "kcache/remote/remote.hpp"
#include "kcache/store/key.hpp"
#include "redis_server.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

using remote::RemoteErrc;

constexpr int kObjects = 16;
constexpr std::size_t kBytes = 2048;

class RedisBatch : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        ASSERT_TRUE(start_into(server_, RedisServer::start(dir() / "redis")));
    }
    // The value of field `name` of INFO `section`.
    long long info(const std::string& section, const std::string& name) {
        auto out = server_->cli({"INFO", section});
        EXPECT_TRUE(out) << out.error();
        const std::string text = out ? *out : "";
        const auto at = text.find(name + ":");
        return at == std::string::npos ? -1 : std::stoll(text.substr(at + name.size() + 1));
    }
    // How often the server ran `command`.
    long long calls(const std::string& command) {
        auto out = server_->cli({"INFO", "commandstats"});
        EXPECT_TRUE(out) << out.error();
        const std::string text = out ? *out : "";
        const std::string field = "cmdstat_" + command + ":calls=";
        const auto at = text.find(field);
        return at == std::string::npos ? 0 : std::stoll(text.substr(at + field.size()));
    }
    // Socket reads the server processed (each INFO asked adds its own).
    long long reads() { return info("stats", "total_reads_processed"); }
    std::optional<RedisServer> server_;
};

TEST_F(RedisBatch, ManyObjectsGoOutPipelinedAndEachGetsItsOwnAnswer) {
    auto opened = remote::Client::open(test_settings(server_->url(), dir() / "state"));
    ASSERT_TRUE(opened) << opened.error().message;
    remote::Client& c = **opened;
    std::vector<store::KeyFields> fields;
    std::vector<store::Bytes> bytes;
    for (int n = 0; n < kObjects; ++n) {
        fields.push_back(made_up_fields(n));
        bytes.push_back(made_up_bytes(n, kBytes));
    }
    const store::Provenance prov = made_up_provenance();
    std::vector<remote::Client::UploadItem> items;
    for (int n = 0; n < kObjects; ++n) {
        items.push_back({&fields[n], bytes[n], &prov});
    }
    ASSERT_TRUE(c.fetch(made_up_fields(100)).error().code == RemoteErrc::not_found);  // connected

    long long before = reads();
    const auto up = c.upload_many(items);
    const long long put_reads = reads() - before - 1;
    for (const auto& u : up) {
        EXPECT_TRUE(u) << u.error().message;
    }
    EXPECT_EQ(c.counters().uploads, static_cast<std::uint64_t>(kObjects));
    EXPECT_EQ(calls("set"), kObjects);

    // One bad value among good ones.
    const std::string bad_key = remote::object_path(store::make_key(fields[5]));
    ASSERT_TRUE(server_->cli({"SET", bad_key, "not an object"}));

    before = reads();
    const auto got = c.fetch_many(fields);
    const long long get_reads = reads() - before - 1;
    ASSERT_EQ(got.size(), fields.size());
    for (int n = 0; n < kObjects; ++n) {
        if (n == 5) {
            ASSERT_FALSE(got[n]);
            EXPECT_EQ(got[n].error().code, RemoteErrc::corrupt) << got[n].error().message;
        } else {
            ASSERT_TRUE(got[n]) << n << ": " << got[n].error().message;
            EXPECT_EQ(got[n]->bytes, bytes[n]) << n;
        }
    }
    const remote::Counters k = c.counters();
    EXPECT_EQ(k.hits, static_cast<std::uint64_t>(kObjects - 1));
    EXPECT_EQ(k.corrupt, 1u);
    EXPECT_EQ(k.errors, 0u);

    // One at a time, the same objects cost a read of the server's each.
    before = reads();
    for (const store::KeyFields& f : fields) {
        (void)c.fetch(f);
    }
    const long long single_reads = reads() - before - 1;
    EXPECT_GE(single_reads, kObjects);
    EXPECT_LE(get_reads, 2) << "a batch of " << kObjects << " gets took " << get_reads << " reads";
    EXPECT_LT(put_reads, kObjects / 2)
        << "a batch of " << kObjects << " puts took " << put_reads << " reads";
    // The same commands per get, batched or not (and the first, absent, one).
    EXPECT_EQ(calls("getrange"), 1 + 2 * kObjects);
}

TEST_F(RedisBatch, HeldManyTellsVerifiedAbsentAndUnusableApart) {
    auto opened = remote::Client::open(test_settings(server_->url(), dir() / "state"));
    ASSERT_TRUE(opened) << opened.error().message;
    remote::Client& c = **opened;
    ASSERT_TRUE(c.upload(made_up_fields(1), made_up_bytes(1, kBytes), made_up_provenance()));
    const std::string bad_key = remote::object_path(store::make_key(made_up_fields(2)));
    ASSERT_TRUE(server_->cli({"SET", bad_key, "garbage"}));
    const auto held = c.held_many({made_up_fields(1), made_up_fields(2), made_up_fields(3)});
    ASSERT_EQ(held.size(), 3u);
    ASSERT_TRUE(held[0] && held[1] && held[2]);
    EXPECT_EQ(held[0]->holding, remote::Holding::verified);
    EXPECT_EQ(held[1]->holding, remote::Holding::unusable);
    EXPECT_EQ(held[2]->holding, remote::Holding::absent);
}

}  // namespace
}  // namespace kcache::test
