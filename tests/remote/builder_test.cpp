// Trusted builders (KCACHE_REMOTE_TRUSTED_BUILDERS) on PoCL against a real
// nginx: an object signed by a key the operator names as a builder is used
// without the load check in kcache-verify (counted as a builder hit), and
// every other object, a forged one signed by a trusted key that is not a
// builder's included, is still checked: a miss and a JIT, never a signal
// and never wrong numbers.

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "cache_fixture.hpp"
#include "kcache/cl/kat.hpp"
#include "kcache/config/remote_tier.hpp"
#include "kcache/remote/envelope.hpp"
#include "kcache/sign/signature.hpp"
#include "kcache/store/store.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

using RemoteBuilder = CacheTest;

const KernelRequest kF32{"dot", {{"dtype", "f32"}}, {}, Mode::blocking};
const KernelRequest kF16{"dot", {{"dtype", "f16"}}, {}, Mode::blocking};

// The detail of the miss of `rung` in `o`; "" when it did not miss.
std::string remote_miss(const Outcome& o, Rung rung) {
    for (const auto& m : o.misses) {
        if (m.rung == rung) {
            return m.detail;
        }
    }
    return "";
}

// `c` reading `url`, trusting the test key; `builders` (a .pub file, or
// empty) set as KCACHE_REMOTE_TRUSTED_BUILDERS would set it.
Config node_config(Config c, const std::string& url, const std::filesystem::path& builders) {
    c.remote_urls = {url};
    c.remote_timeout = std::chrono::milliseconds(2000);
    const auto keys = write_test_keys(c.dir.parent_path() / "keys").string();
    c.remote_signing_key = keys + ".key";
    c.trusted_keys = {keys + ".pub"};
    if (!builders.empty()) {
        c.origins["remote_trusted_builders"] = {builders.string(), Source::environment};
    }
    return c;
}

// Writes other_signing_key() (the builder's) as `dir`/builder.key and .pub;
// returns the .pub.
std::filesystem::path write_builder_key(const std::filesystem::path& dir) {
    std::filesystem::create_directories(dir);
    const store::SecretKey key = other_signing_key();
    EXPECT_TRUE(store::write_text_file(dir / "builder.key", store::format_secret_key(key), 0600,
                                       store::Replace::yes));
    EXPECT_TRUE(store::write_text_file(dir / "builder.pub",
                                       store::format_public_key(key.public_key()), 0644,
                                       store::Replace::yes));
    return dir / "builder.pub";
}

void write_object(const std::filesystem::path& file, const store::Bytes& object) {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(object.data()),
               static_cast<std::streamsize>(object.size()));
}

// The stored entries of dot f32 and f16 built in store `dir`.
std::pair<store::Entry, store::Entry> built_entries(const std::filesystem::path& dir,
                                                    const std::string& key,
                                                    const std::string& other_key) {
    auto built = store::Store::open(dir);
    EXPECT_TRUE(built);
    store::Key k, other_k;
    EXPECT_TRUE(k.parse_hex(key) && other_k.parse_hex(other_key));
    auto asked = built->get(k);
    auto other = built->get(other_k);
    EXPECT_TRUE(asked && other);
    return {asked ? *asked : store::Entry{}, other ? *other : store::Entry{}};
}

TEST_F(RemoteBuilder, TheSettingReachesTheClientAndDefaultsToNone) {
    const auto pub = write_builder_key(dir() / "keys");
    Config c = config("a");
    EXPECT_TRUE(service::trusted_builder_files(c).empty());
    EXPECT_TRUE(service::remote_settings(c).trusted_builders.keys().empty());
    c.origins["remote_trusted_builders"] = {pub.string() + ":" + pub.string(), Source::environment};
    const remote::Settings s = service::remote_settings(c);
    ASSERT_EQ(s.trusted_builders.keys().size(), 1u);
    EXPECT_EQ(s.trusted_builders.keys()[0].key.key, other_signing_key().public_key().key);
}

// An object signed by the builder's key skips the helper: even another
// variant's binary under the key (which the known-answer test refuses) is
// served, which is what naming a builder trusts it with. The same object
// signed by a trusted key that is not a builder's is checked and refused.
TEST_F(RemoteBuilder, ABuildersObjectSkipsTheCheckAnotherTrustedKeysIsChecked) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    const auto builder_pub = write_builder_key(dir() / "builder");
    std::string key, other_key;
    {
        auto builder = Cache::open(node_config(config("a"), server->url(), {}));
        key = builder->program(context_, device_, kF32).outcome().key;
        other_key = builder->program(context_, device_, kF16).outcome().key;
    }
    const auto [asked, other] = built_entries(dir() / "a", key, other_key);
    const store::Bytes body =
        remote::encode_envelope(asked.info.fields, other.bytes, asked.info.provenance);
    auto by_builder = remote::sign_envelope(body, other_signing_key());
    auto by_fleet = remote::sign_envelope(body, test_signing_key());
    ASSERT_TRUE(by_builder && by_fleet);

    write_object(server->object_file(key), *by_fleet);
    const Config checked = node_config(config("b"), server->url(), builder_pub);
    {
        auto cache = Cache::open(checked);
        auto p = cache->program(context_, device_, kF32);
        ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
        EXPECT_EQ(p.outcome().rung, Rung::jit);
        EXPECT_NE(remote_miss(p.outcome(), Rung::remote).find("known-answer test"),
                  std::string::npos)
            << remote_miss(p.outcome(), Rung::remote);
    }
    EXPECT_EQ(remote::read_stats_file(checked.dir).builder_hits, 0u);

    write_object(server->object_file(key), *by_builder);
    const Config trusted = node_config(config("c"), server->url(), builder_pub);
    {
        auto cache = Cache::open(trusted);
        auto p = cache->program(context_, device_, kF32);
        ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
        EXPECT_EQ(p.outcome().rung, Rung::remote) << remote_miss(p.outcome(), Rung::remote);
        const CacheStats s = cache->stats();  // the process's own, from the same list
        EXPECT_EQ(s.remote_builder_hits, 1u);
        EXPECT_EQ(s.remote_hits, 1u);
    }
    EXPECT_EQ(remote::read_stats_file(trusted.dir).builder_hits, 1u);
    EXPECT_EQ(remote::read_stats_file(trusted.dir).hits, 1u);

    // Without the setting the builder's object is checked like any other.
    const Config plain = node_config(config("d"), server->url(), {});
    auto cache = Cache::open(plain);
    auto p = cache->program(context_, device_, kF32);
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::jit);
    auto variant = kernels::make_variant("dot", {{"dtype", "f32"}});
    ASSERT_TRUE(variant);
    EXPECT_EQ(cl::run_kat(context_, device_, p.get(), *variant).state, cl::KatState::passed);
}

// A truncated binary signed by a trusted key that is not a builder's, on a
// node that names a builder: loaded in kcache-verify first (PoCL asserts in
// its loader), so the caller gets a miss and a JIT, never a signal.
TEST_F(RemoteBuilder, ATruncatedObjectOfANonBuilderKeyIsCheckedNeverASignal) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    const auto builder_pub = write_builder_key(dir() / "builder");
    std::string key;
    {
        auto warmer = Cache::open(node_config(config("a"), server->url(), {}));
        key = warmer->program(context_, device_, scale_request(80)).outcome().key;
    }
    auto stored = store::Store::open(dir() / "a");
    ASSERT_TRUE(stored);
    store::Key k;
    ASSERT_TRUE(k.parse_hex(key));
    auto entry = stored->get(k);
    ASSERT_TRUE(entry);
    const store::Bytes half(entry->bytes.begin(), entry->bytes.begin() + entry->bytes.size() / 2);
    auto forged = remote::sign_envelope(
        remote::encode_envelope(entry->info.fields, half, entry->info.provenance),
        test_signing_key());
    ASSERT_TRUE(forged);
    write_object(server->object_file(key), *forged);
    const Config node = node_config(config("b"), server->url(), builder_pub);
    {
        auto cache = Cache::open(node);
        auto p = cache->program(context_, device_, scale_request(80));
        ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
        EXPECT_EQ(p.outcome().rung, Rung::jit);
        EXPECT_NE(remote_miss(p.outcome(), Rung::remote).find("kcache-verify"), std::string::npos)
            << remote_miss(p.outcome(), Rung::remote);
        EXPECT_FLOAT_EQ(run_scale(context_, device_, p.get(), 1.0f), 82.0f);
    }
    EXPECT_EQ(remote::read_stats_file(node.dir).builder_hits, 0u);
}

}  // namespace
}  // namespace kcache::test
