// Namespaces of the remote tier against a real nginx: names checked, each
// namespace's objects under its own prefix beside an untouched default
// layout, each namespace trusting only its own keys (an object signed by
// team B's key placed under team A's prefix is refused there and used under
// B), reads trying the namespaces in order, and the counters kept per
// namespace in the stats file beside the totals.

#include <gtest/gtest.h>

#include <fstream>

#include "namespace_support.hpp"

namespace kcache::test {
namespace {

using remote::RemoteErrc;

const store::SecretKey& platform_key() {
    static const store::SecretKey key = [] {
        auto k = store::generate_key();
        EXPECT_TRUE(k) << k.error().message;
        return k ? *k : store::SecretKey{};
    }();
    return key;
}

class RemoteNamespace : public RemoteServerTest {
  protected:
    // A client of `spaces` signing with `key`, its state in dir()/`state`.
    std::unique_ptr<remote::Client> open(const std::string& state, const store::SecretKey& key,
                                         std::vector<remote::Namespace> spaces) {
        return client(namespace_settings(server_->url(), dir() / state, key, std::move(spaces)));
    }
    static void upload(remote::Client& c, int n) {
        auto up = c.upload(made_up_fields(n), made_up_bytes(n), made_up_provenance());
        ASSERT_TRUE(up) << up.error().message;
    }
    std::filesystem::path on_disk(const std::string& relative) const {
        return server_->root() / relative;
    }
};

TEST(RemoteNamespaceNames, ListsAreCheckedAndTheOwnComesFirst) {
    auto ok = remote::parse_namespaces(" team-a , platform ");
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(*ok, (std::vector<std::string>{"team-a", "platform"}));
    EXPECT_TRUE(remote::parse_namespaces("")->empty());
    EXPECT_TRUE(remote::parse_namespaces("  ")->empty());
    for (const std::string& bad :
         std::vector<std::string>{"Team", "a..b", ".a", "-a", "a/b", "a,,b", "a,", "a b",
                                  "team-a,team-a", std::string(64, 'a'), "a\x1b"}) {
        auto refused = remote::parse_namespaces(bad);
        ASSERT_FALSE(refused) << bad;
        EXPECT_EQ(refused.error().code, RemoteErrc::config) << bad;
    }
    EXPECT_TRUE(remote::parse_namespaces(std::string(63, 'a')));
    EXPECT_TRUE(remote::parse_namespaces("0.a_b-c"));
    EXPECT_EQ(remote::namespace_dir(""), "kcache/v1/");
    EXPECT_EQ(remote::namespace_dir("team-a"), "kcache/ns/team-a/v1/");
}

TEST_F(RemoteNamespace, ABadNameIsAConfigErrorNamingTheSetting) {
    auto s = namespace_settings(server_->url(), dir() / "s", test_signing_key(),
                                {trusting("Team-A", {test_signing_key()})});
    auto c = remote::Client::open(std::move(s));
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, RemoteErrc::config);
    EXPECT_NE(c.error().message.find("KCACHE_REMOTE_NAMESPACE"), std::string::npos)
        << c.error().message;
}

TEST_F(RemoteNamespace, ObjectsLiveUnderTheirPrefixAndTheDefaultLayoutIsUnchanged) {
    auto plain = client(test_settings(server_->url(), dir() / "plain"));
    auto a = open("a", test_signing_key(), {trusting("team-a", {test_signing_key()})});
    ASSERT_TRUE(plain && a);
    upload(*plain, 1);
    upload(*a, 2);
    const std::string key1 = store::make_key(made_up_fields(1)).hex();
    EXPECT_EQ(plain->object_url(store::make_key(made_up_fields(1))),
              server_->url() + "/kcache/v1/" + key1.substr(0, 2) + "/" + key1);
    EXPECT_TRUE(std::filesystem::exists(server_->object_file(key1)));
    EXPECT_TRUE(std::filesystem::exists(on_disk(object_in("team-a", 2))));
    EXPECT_FALSE(
        std::filesystem::exists(server_->object_file(store::make_key(made_up_fields(2)).hex())));
    // Each sees only its own layout.
    EXPECT_TRUE(a->fetch(made_up_fields(2)));
    EXPECT_EQ(a->fetch(made_up_fields(1)).error().code, RemoteErrc::not_found);
    EXPECT_EQ(plain->fetch(made_up_fields(2)).error().code, RemoteErrc::not_found);
}

// Team B's object copied under team A's prefix is refused by a reader of A
// (B's key is not trusted for A, even though the reader trusts it for B) and
// used by a reader of B; A's own object is used under A.
TEST_F(RemoteNamespace, AnObjectSignedByAnotherTeamsKeyIsRefusedUnderTheWrongNamespace) {
    const store::SecretKey a_key = test_signing_key(), b_key = other_signing_key();
    auto a = open("a", a_key, {trusting("team-a", {a_key})});
    auto b = open("b", b_key, {trusting("team-b", {b_key})});
    ASSERT_TRUE(a && b);
    upload(*a, 1);
    upload(*b, 2);
    std::filesystem::create_directories(on_disk(object_in("team-a", 2)).parent_path());
    std::filesystem::copy_file(on_disk(object_in("team-b", 2)), on_disk(object_in("team-a", 2)));

    auto reader = open("reader", a_key, {trusting("team-a", {a_key}), trusting("team-b", {b_key})});
    ASSERT_TRUE(reader);
    EXPECT_TRUE(reader->fetch(made_up_fields(1)));
    // Entry 2 is refused under team-a, then found under team-b.
    EXPECT_TRUE(reader->fetch(made_up_fields(2)));
    auto by_ns = reader->namespace_counters();
    EXPECT_EQ(by_ns["team-a"].hits, 1u);
    EXPECT_EQ(by_ns["team-a"].corrupt, 1u);
    EXPECT_EQ(by_ns["team-a"].misses, 1u);
    EXPECT_EQ(by_ns["team-b"].hits, 1u);

    auto only_a = open("only-a", a_key, {trusting("team-a", {a_key})});
    ASSERT_TRUE(only_a);
    auto refused = only_a->fetch(made_up_fields(2));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, RemoteErrc::corrupt) << refused.error().message;
    EXPECT_EQ(only_a->counters().corrupt, 1u);
    EXPECT_EQ(only_a->namespace_counters()["team-a"].corrupt, 1u);
}

// The global trusted keys do not count for a namespace.
TEST_F(RemoteNamespace, AKeyTrustedGloballyIsNotTrustedForANamespace) {
    auto b = open("b", other_signing_key(), {trusting("team-a", {other_signing_key()})});
    ASSERT_TRUE(b);
    upload(*b, 3);
    auto s = namespace_settings(server_->url(), dir() / "r", test_signing_key(),
                                {trusting("team-a", {test_signing_key()})});
    s.trusted_keys.add({other_signing_key().public_key(), "global"});
    auto reader = client(std::move(s));
    ASSERT_TRUE(reader);
    auto got = reader->fetch(made_up_fields(3));
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code, RemoteErrc::corrupt) << got.error().message;
}

TEST_F(RemoteNamespace, AReaderFindsAnObjectOnlyPresentInALaterNamespace) {
    auto platform = open("p", platform_key(), {trusting("platform", {platform_key()})});
    ASSERT_TRUE(platform);
    upload(*platform, 4);
    {
        auto reader = open(
            "reader", test_signing_key(),
            {trusting("team-a", {test_signing_key()}), trusting("platform", {platform_key()})});
        ASSERT_TRUE(reader);
        auto got = reader->fetch(made_up_fields(4));
        ASSERT_TRUE(got) << got.error().message;
        EXPECT_EQ(got->bytes, made_up_bytes(4));
        auto many = reader->fetch_many({made_up_fields(4), made_up_fields(5)});
        ASSERT_EQ(many.size(), 2u);
        EXPECT_TRUE(many[0]);
        EXPECT_EQ(many[1].error().code, RemoteErrc::not_found);
        // An upload goes to the own namespace only.
        upload(*reader, 6);
        EXPECT_TRUE(std::filesystem::exists(on_disk(object_in("team-a", 6))));
        EXPECT_FALSE(std::filesystem::exists(on_disk(object_in("platform", 6))));
        EXPECT_EQ(reader->counters().hits, 2u);
        EXPECT_EQ(reader->counters().misses, 1u);
    }
    // The closed client's counters, per namespace, in the stats file.
    const auto by_ns = remote::read_namespace_stats(dir() / "reader");
    ASSERT_EQ(by_ns.count("team-a"), 1u);
    ASSERT_EQ(by_ns.count("platform"), 1u);
    EXPECT_EQ(by_ns.at("team-a").misses, 3u);  // 4 twice and 5: not in team-a
    EXPECT_EQ(by_ns.at("team-a").hits, 0u);
    EXPECT_EQ(by_ns.at("team-a").uploads, 1u);
    EXPECT_EQ(by_ns.at("platform").hits, 2u);
    EXPECT_EQ(by_ns.at("platform").misses, 1u);
    EXPECT_EQ(by_ns.at("platform").uploads, 0u);
    const auto total = remote::read_stats_file(dir() / "reader");
    EXPECT_EQ(total.hits, 2u);
    EXPECT_EQ(total.misses, 1u);
    EXPECT_EQ(total.uploads, 1u);
}

}  // namespace
}  // namespace kcache::test
