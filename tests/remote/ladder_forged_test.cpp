// The remote rung of the ladder against objects a hostile party put on the
// server (PoCL, real compiles, a real nginx): forged, truncated, unsigned,
// and another variant's binary are misses, then a JIT whose program is
// right, and never reach the user store.

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "kcache/cl/kat.hpp"
#include "kcache/remote/envelope.hpp"
#include "kcache/store/store.hpp"
#include "remote_ladder.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

store::Bytes file_bytes(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    return store::Bytes(std::istreambuf_iterator<char>(in), {});
}

// The object of `key` (hex) as `original` holds it, signed by the test key.
remote::Envelope decoded(const store::Bytes& original, const std::string& key) {
    store::Key k;
    EXPECT_TRUE(k.parse_hex(key));
    store::TrustedKeys keys;
    keys.add({test_signing_key().public_key(), "test"});
    auto env =
        remote::decode_envelope(original, k, 64 << 20, {remote::ObjectSignatures::require, &keys});
    EXPECT_TRUE(env) << env.error().message;
    return env ? std::move(*env) : remote::Envelope{};
}

// What a hostile party can put on the server is a miss, then a JIT that runs
// right, and its bytes never reach the user store: the writer's payload
// swapped (truncated, checksum recomputed, the writer's signature kept),
// another variant's binary unsigned, bytes signed by a key not trusted, and
// another variant's whole, validly signed object.
TEST_F(RemoteLadder, ForgedObjectsAreMissesThenJitAndNeverStored) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    std::string key, other_key;
    {
        auto warmer = Cache::open(remote_config(config("a"), server->url()));
        key = warmer->program(context_, device_, scale_request(60)).outcome().key;
        other_key = warmer->program(context_, device_, scale_request(61)).outcome().key;
    }
    const store::Bytes original = file_bytes(server->object_file(key));
    const store::Bytes other = file_bytes(server->object_file(other_key));
    const remote::Envelope env = decoded(original, key);
    const remote::Envelope other_env = decoded(other, other_key);
    ASSERT_FALSE(env.bytes.empty());
    const store::Bytes half(env.bytes.begin(), env.bytes.begin() + env.bytes.size() / 2);
    store::Bytes swapped = remote::encode_envelope(env.fields, half, env.provenance);
    constexpr std::size_t kSignatureBlock = 10 + store::kKeyIdBytes + store::kSignatureBytes;
    swapped.insert(swapped.end(), original.end() - kSignatureBlock, original.end());
    auto untrusted = remote::sign_envelope(
        remote::encode_envelope(env.fields, made_up_bytes(1, env.bytes.size()), env.provenance),
        other_signing_key());
    ASSERT_TRUE(untrusted);
    const std::vector<std::pair<store::Bytes, store::Bytes>> forged = {
        {swapped, half},
        {remote::encode_envelope(env.fields, other_env.bytes, env.provenance), other_env.bytes},
        {*untrusted, made_up_bytes(1, env.bytes.size())},
        {other, other_env.bytes}};
    for (std::size_t i = 0; i < forged.size(); ++i) {
        std::ofstream(server->object_file(key), std::ios::binary)
            .write(reinterpret_cast<const char*>(forged[i].first.data()),
                   static_cast<std::streamsize>(forged[i].first.size()));
        const Config node = remote_config(config("b" + std::to_string(i)), server->url());
        {
            auto cache = Cache::open(node);
            auto p = cache->program(context_, device_, scale_request(60));
            ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
            EXPECT_EQ(p.outcome().rung, Rung::jit) << i;
            const std::string why = miss_of(p.outcome(), Rung::remote);
            EXPECT_TRUE(why.find("corrupt") == 0 || why.find("wrong_key") == 0) << i << ": " << why;
            EXPECT_EQ(cache->stats().remote_corrupt, 1u) << i;
            EXPECT_FLOAT_EQ(run_scale(context_, device_, p.get(), 1.0f), 62.0f) << i;
        }
        auto store = store::Store::open(node.dir);
        ASSERT_TRUE(store);
        auto stored = store->get(env.fields);
        ASSERT_TRUE(stored) << i;
        EXPECT_NE(stored->bytes, forged[i].second) << i << ": the forged payload was stored";
    }
}

// With signatures not required, a payload truncated under a recomputed
// checksum reaches the client: it is loaded in kcache-verify first (PoCL
// asserts in its loader), so the caller gets a miss and a JIT, never a signal.
TEST_F(RemoteLadder, AnUnsignedTruncatedBinaryIsAMissAndAJitNeverASignal) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    std::string key;
    {
        auto warmer = Cache::open(remote_config(config("a"), server->url()));
        key = warmer->program(context_, device_, scale_request(70)).outcome().key;
    }
    const remote::Envelope env = decoded(file_bytes(server->object_file(key)), key);
    const store::Bytes half(env.bytes.begin(), env.bytes.begin() + env.bytes.size() / 2);
    const store::Bytes forged = remote::encode_envelope(env.fields, half, env.provenance);
    std::ofstream(server->object_file(key), std::ios::binary)
        .write(reinterpret_cast<const char*>(forged.data()),
               static_cast<std::streamsize>(forged.size()));
    Config node = remote_config(config("b"), server->url());
    node.remote_require_signed = false;
    auto cache = Cache::open(node);
    auto p = cache->program(context_, device_, scale_request(70));
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::jit);
    EXPECT_NE(miss_of(p.outcome(), Rung::remote).find("kcache-verify"), std::string::npos)
        << miss_of(p.outcome(), Rung::remote);
    EXPECT_FLOAT_EQ(run_scale(context_, device_, p.get(), 1.0f), 72.0f);
}

// With signatures not required, another variant's binary under the key of
// the variant asked for (it loads, then computes wrong numbers) reaches the
// client: its known-answer test runs in kcache-verify first, so the caller
// gets a miss and a JIT whose program passes the test, and nothing is stored
// from the remote.
TEST_F(RemoteLadder, AnotherVariantsBinaryIsAMissAndAJitNeverWrongNumbers) {
    auto server = start_nginx(dir() / "nginx");
    ASSERT_TRUE(server);
    const KernelRequest f32{"dot", {{"dtype", "f32"}}, {}, Mode::blocking};
    const KernelRequest f16{"dot", {{"dtype", "f16"}}, {}, Mode::blocking};
    std::string key, other_key;
    {
        auto builder = Cache::open(config("a"));
        key = builder->program(context_, device_, f32).outcome().key;
        other_key = builder->program(context_, device_, f16).outcome().key;
    }
    auto built = store::Store::open(dir() / "a");
    ASSERT_TRUE(built);
    store::Key k, other_k;
    ASSERT_TRUE(k.parse_hex(key) && other_k.parse_hex(other_key));
    auto asked = built->get(k);
    auto other = built->get(other_k);
    ASSERT_TRUE(asked && other);
    const store::Bytes forged =
        remote::encode_envelope(asked->info.fields, other->bytes, asked->info.provenance);
    const auto object = server->object_file(key);
    std::filesystem::create_directories(object.parent_path());
    std::ofstream(object, std::ios::binary)
        .write(reinterpret_cast<const char*>(forged.data()),
               static_cast<std::streamsize>(forged.size()));

    Config node = remote_config(config("b"), server->url());
    node.remote_require_signed = false;
    auto cache = Cache::open(node);
    auto p = cache->program(context_, device_, f32);
    ASSERT_EQ(p.outcome().status, StatusCode::ok) << p.outcome().message;
    EXPECT_EQ(p.outcome().rung, Rung::jit);
    EXPECT_NE(miss_of(p.outcome(), Rung::remote).find("known-answer test"), std::string::npos)
        << miss_of(p.outcome(), Rung::remote);
    auto variant = kernels::make_variant("dot", {{"dtype", "f32"}});
    ASSERT_TRUE(variant);
    const cl::KatResult kat = cl::run_kat(context_, device_, p.get(), *variant);
    EXPECT_EQ(kat.state, cl::KatState::passed) << kat.detail;
    cache.reset();
    auto stored = store::Store::open(node.dir);
    ASSERT_TRUE(stored);
    auto entry = stored->get(k);
    ASSERT_TRUE(entry);
    EXPECT_NE(entry->bytes, other->bytes) << "the other variant's binary was stored";
}

}  // namespace
}  // namespace kcache::test
