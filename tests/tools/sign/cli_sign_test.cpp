// Signed packs through the CLI, with Debian's `minisign` on the other side:
// keygen, sign, export --sign, verify --pack and import under the policy.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "cli_sign_fixture.hpp"

namespace kcache::test {
namespace {

TEST_F(CliSign, KeygenWritesAKeyPairThatMinisignSignsAndVerifiesWith) {
    const CliRun r = kcache({"keygen", "--output", path("k")});
    ASSERT_EQ(r.code, 0) << r.err;
    struct stat st {};
    ASSERT_EQ(::stat(path("k.key").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    const std::string pub = file_bytes(path("k.pub"));
    EXPECT_EQ(pub.rfind("untrusted comment: minisign public key ", 0), 0u) << pub;
    // minisign reads kcache's secret key (its checksum included) and signs with it.
    std::ofstream(path("f.txt")) << "payload\n";
    const CliRun s = minisign({"-S", "-s", path("k.key"), "-m", path("f.txt"), "-t", "hello"});
    ASSERT_EQ(s.code, 0) << s.out << s.err;
    const CliRun v = minisign({"-V", "-p", path("k.pub"), "-m", path("f.txt")});
    EXPECT_EQ(v.code, 0) << v.out << v.err;
    EXPECT_NE(v.out.find("Trusted comment: hello"), std::string::npos) << v.out;

    // A second keygen to the same name is refused and changes nothing.
    const std::string secret = file_bytes(path("k.key"));
    const CliRun again = kcache({"keygen", "--output", path("k")});
    EXPECT_EQ(again.code, 2);
    EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
    EXPECT_EQ(file_bytes(path("k.key")), secret);
    EXPECT_EQ(kcache({"keygen"}).code, 2);
}

TEST_F(CliSign, MinisignVerifiesWhatKcacheSigns) {
    ASSERT_EQ(kcache({"keygen", "--output", path("k")}).code, 0);
    const auto pack = make_pack("p");
    const CliRun s = kcache({"sign", pack.string(), "--key", path("k.key")});
    ASSERT_EQ(s.code, 0) << s.err;
    const CliRun v = minisign({"-V", "-p", path("k.pub"), "-m", pack.string()});
    ASSERT_EQ(v.code, 0) << v.out << v.err;
    EXPECT_NE(v.out.find("Trusted comment: kcache pack\tschema:3\tentries:3"), std::string::npos)
        << v.out;
    EXPECT_NE(v.out.find("file:p.kcpack"), std::string::npos);

    const CliRun ok = kcache_trusting({"verify", "--pack", pack.string(), "--json"}, path("k.pub"));
    ASSERT_EQ(ok.code, 0) << ok.out << ok.err;
    const auto sig = ok.json()["signature"];
    EXPECT_EQ(sig["state"], "trusted");
    EXPECT_EQ(sig["trusted"], true);
    EXPECT_NE(sig["trusted_comment"].get<std::string>().find("schema:3"), std::string::npos);
    const std::string key_id = sig["key_id"];
    EXPECT_NE(file_bytes(path("k.pub")).find(key_id), std::string::npos);
    const CliRun text = kcache_trusting({"verify", "--pack", pack.string()}, path("k.pub"));
    EXPECT_NE(text.out.find("signature: trusted, key " + key_id + " (trusted)"), std::string::npos)
        << text.out;
    EXPECT_NE(text.out.find("trusted comment: kcache pack"), std::string::npos);

    // One flipped byte: both minisign and kcache refuse it.
    std::string bytes = file_bytes(pack);
    bytes[bytes.size() / 2] ^= 0x20;
    std::ofstream(pack, std::ios::binary | std::ios::trunc) << bytes;
    EXPECT_NE(minisign({"-V", "-p", path("k.pub"), "-m", pack.string()}).code, 0);
    const CliRun bad =
        kcache_trusting({"verify", "--pack", pack.string(), "--json"}, path("k.pub"));
    EXPECT_EQ(bad.code, 1);
    EXPECT_EQ(bad.json()["signature"]["state"], "invalid");
    EXPECT_NE(
        bad.json()["signature"]["detail"].get<std::string>().find("does not match its signature"),
        std::string::npos);
}

TEST_F(CliSign, KcacheVerifiesWhatMinisignSigns) {
    const auto pack = make_pack("p");
    // An unencrypted key (-W), with the default algorithm and the legacy one (-l).
    // (A password-protected key: cli_sign_slow_test.cpp; its scrypt takes a minute.)
    ASSERT_EQ(minisign({"-G", "-W", "-p", path("w.pub"), "-s", path("w.key")}).code, 0);
    for (const std::string legacy : {"", "-l"}) {
        std::vector<std::string> args{"-S",          "-s", path("w.key"),    "-m",
                                      pack.string(), "-t", "built by ci #42"};
        if (!legacy.empty()) {
            args.push_back(legacy);
        }
        ASSERT_EQ(minisign(args).code, 0);
        // base64 of the algorithm: "RU…" is "ED" (prehashed), "RW…" is "Ed" (legacy).
        const std::string sig = file_bytes(ks::signature_path(pack));
        EXPECT_EQ(sig.substr(sig.find('\n') + 1, 2), legacy.empty() ? "RU" : "RW");
        const CliRun r =
            kcache_trusting({"verify", "--pack", pack.string(), "--json"}, path("w.pub"));
        ASSERT_EQ(r.code, 0) << legacy << r.out << r.err;
        EXPECT_EQ(r.json()["signature"]["state"], "trusted") << r.out;
        EXPECT_EQ(r.json()["signature"]["trusted_comment"], "built by ci #42");
    }
    // kcache signs with minisign's unencrypted key.
    ASSERT_EQ(kcache({"sign", pack.string(), "--key", path("w.key")}).code, 0);
    EXPECT_EQ(minisign({"-V", "-p", path("w.pub"), "-m", pack.string()}).code, 0);
    ASSERT_EQ(kcache({"keygen", "--output", path("e")}).code, 0);
    // Signed by a key that is not trusted: reported, and refused under the policy.
    const CliRun other =
        kcache_trusting({"verify", "--pack", pack.string(), "--json"}, path("e.pub"));
    EXPECT_EQ(other.code, 0);
    EXPECT_EQ(other.json()["signature"]["state"], "untrusted_key");
    EXPECT_EQ(other.json()["signature"]["trusted"], false);
    const CliRun strict =
        kcache_trusting({"verify", "--pack", pack.string(), "--json"}, path("e.pub"), true);
    EXPECT_EQ(strict.code, 1);
    EXPECT_EQ(strict.json()["signature"]["used_by_runtime"], false);
}

TEST_F(CliSign, ImportRefusesWhatThePolicyRefuses) {
    ASSERT_EQ(kcache({"keygen", "--output", path("k")}).code, 0);
    ASSERT_EQ(kcache({"keygen", "--output", path("other")}).code, 0);
    const auto pack = make_pack("p");
    auto entries = [&] { return kcache({"ls", "--json"}).json().size(); };

    CliRun r = kcache_trusting({"import", pack.string()}, path("k.pub"), true);
    EXPECT_EQ(r.code, 4);
    EXPECT_NE(r.err.find("unsigned"), std::string::npos) << r.err;
    ASSERT_EQ(kcache({"sign", pack.string(), "--key", path("other.key")}).code, 0);
    r = kcache_trusting({"import", pack.string()}, path("k.pub"), true);
    EXPECT_EQ(r.code, 4);
    EXPECT_NE(r.err.find("which is not trusted"), std::string::npos) << r.err;
    EXPECT_EQ(entries(), 0u);

    ASSERT_EQ(kcache({"sign", pack.string(), "--key", path("k.key")}).code, 0);
    std::string sig = file_bytes(ks::signature_path(pack));
    std::ofstream(ks::signature_path(pack)) << sig.substr(0, sig.size() / 2);  // truncated
    r = kcache_trusting({"import", pack.string()}, path("k.pub"), true);
    EXPECT_EQ(r.code, 4);
    EXPECT_NE(r.err.find("malformed signature file"), std::string::npos) << r.err;
    // Without the policy it imports, saying the signature is invalid.
    r = kcache_trusting({"import", pack.string()}, path("k.pub"));
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("invalid signature"), std::string::npos) << r.err;
    EXPECT_EQ(entries(), 3u);

    std::filesystem::remove_all(store_dir());
    ASSERT_EQ(kcache({"sign", pack.string(), "--key", path("k.key")}).code, 0);
    r = kcache_trusting({"import", pack.string(), "--json"}, path("k.pub"), true);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.json()["imported"], 3);
}

TEST_F(CliSign, ExportSignsAndBadKeysOrPacksAreClearErrors) {
    ASSERT_EQ(kcache({"keygen", "--output", path("k")}).code, 0);
    auto store = ks::Store::open(store_dir(), ks::Policy{});
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE(store->put(sample_fields(1), binary_like(2000, 1), test_provenance()).ok());
    const CliRun e = kcache({"export", path("out.kcpack"), "--sign", path("k.key")});
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_NE(e.out.find("signed " + path("out.kcpack")), std::string::npos) << e.out;
    EXPECT_EQ(minisign({"-V", "-p", path("k.pub"), "-m", path("out.kcpack")}).code, 0);

    // A bad key is refused before anything is written.
    const CliRun pub_as_key = kcache({"export", path("x.kcpack"), "--sign", path("k.pub")});
    EXPECT_EQ(pub_as_key.code, 2);
    EXPECT_FALSE(std::filesystem::exists(path("x.kcpack")));
    EXPECT_EQ(kcache({"sign", path("out.kcpack"), "--key", path("absent.key")}).code, 3);
    EXPECT_EQ(kcache({"sign", path("absent.kcpack"), "--key", path("k.key")}).code, 3);
    EXPECT_EQ(kcache({"sign", path("out.kcpack")}).code, 2);
    std::ofstream(path("junk.kcpack")) << "not a pack";
    const CliRun junk = kcache({"sign", path("junk.kcpack"), "--key", path("k.key")});
    EXPECT_EQ(junk.code, 4) << junk.err;
    EXPECT_FALSE(std::filesystem::exists(path("junk.kcpack.minisig")));
}

}  // namespace
}  // namespace kcache::test
