// Signatures in minisign's formats and the trust policy for packs: every way
// a signed pack can be wrong is refused with a reason naming the cause.
// (Interoperability with the `minisign` tool itself: tests/tools/sign/cli_sign_test.cpp.)

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include <fstream>
#include <functional>
#include <random>
#include <thread>

#include "kcache/store/trust.hpp"
#include "signature_internal.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

using ks::SignaturePolicy;
using ks::SignatureState;
using ks::SignErrc;

std::string hex(const std::vector<std::uint8_t>& b) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string s;
    for (auto v : b) {
        s += kDigits[v >> 4];
        s += kDigits[v & 15];
    }
    return s;
}

std::vector<std::uint8_t> bytes_of(std::string_view s) {
    return {s.begin(), s.end()};
}

void write_file(const std::filesystem::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

void flip_byte(const std::filesystem::path& p, std::size_t offset) {
    std::string b = file_bytes(p);
    b[offset] = static_cast<char>(b[offset] ^ 0x01);
    write_file(p, b);
}

ks::SecretKey new_key() {
    auto k = ks::generate_key();
    EXPECT_TRUE(k.ok()) << (k ? "" : k.error().message);
    return k ? *k : ks::SecretKey{};
}

class StoreSignature : public TempDirTest {
  protected:
    // A pack of three entries made by export, like `kcache export` writes.
    std::filesystem::path make_pack(const std::string& name) {
        ks::Policy policy;
        auto store = ks::Store::open(dir() / ("store-" + name), policy);
        EXPECT_TRUE(store.ok());
        for (int i = 0; i < 3; ++i) {
            EXPECT_TRUE(
                store->put(sample_fields(i), binary_like(4000 + 100 * i, i), test_provenance())
                    .ok());
        }
        const auto pack = dir() / (name + ".kcpack");
        EXPECT_TRUE(store->export_pack(pack).ok());
        return pack;
    }
    ks::TrustedKeys trusting(const ks::SecretKey& key) {
        ks::TrustedKeys keys;
        keys.add({key.public_key(), dir() / "test.pub"});
        return keys;
    }
};

TEST_F(StoreSignature, Blake2bMatchesOpenSslAndTheKnownDigests) {
    std::mt19937 rng(7);
    for (std::size_t n : {0, 1, 3, 127, 128, 129, 255, 256, 257, 1000, 4096}) {
        std::vector<std::uint8_t> data(n);
        for (auto& b : data) {
            b = static_cast<std::uint8_t>(rng());
        }
        unsigned char want[64];
        unsigned int len = 0;
        ASSERT_EQ(EVP_Digest(data.data(), n, want, &len, EVP_blake2b512(), nullptr), 1);
        EXPECT_EQ(hex(kcache::sign::detail::blake2b(data, 64)), hex({want, want + len}))
            << "length " << n;
    }
    // BLAKE2b-256, which OpenSSL 3.0 cannot compute (Python's hashlib.blake2b(digest_size=32)).
    EXPECT_EQ(hex(kcache::sign::detail::blake2b(bytes_of("abc"), 32)),
              "bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319");
    EXPECT_EQ(hex(kcache::sign::detail::blake2b({}, 32)),
              "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8");
}

TEST_F(StoreSignature, KeyFilesRoundTripAndEveryFieldIsChecked) {
    const ks::SecretKey key = new_key();
    auto pub = ks::parse_public_key(ks::format_public_key(key.public_key()));
    ASSERT_TRUE(pub.ok()) << pub.error().message;
    EXPECT_EQ(pub->id, key.id);
    EXPECT_EQ(pub->key, key.public_key().key);
    EXPECT_NE(ks::format_public_key(*pub).find("minisign public key " + ks::key_id_hex(key.id)),
              std::string::npos);
    const std::string sk_text = ks::format_secret_key(key);
    auto sk = ks::parse_secret_key(sk_text);
    ASSERT_TRUE(sk.ok()) << sk.error().message;
    EXPECT_EQ(sk->key, key.key);

    // The secret key's base64 line, decoded, changed by `change` and re-encoded.
    // Layout: "Ed" 0, kdf 2, "B2" 4, salt 6, limits 38, key id 54, seed 62,
    // public half 94, checksum 126..157.
    auto edited = [&](const std::function<void(std::vector<std::uint8_t>&)>& change) {
        std::string line = sk_text.substr(sk_text.find('\n') + 1);
        line.pop_back();
        std::vector<std::uint8_t> raw(160);
        EXPECT_EQ(EVP_DecodeBlock(raw.data(), reinterpret_cast<const unsigned char*>(line.data()),
                                  static_cast<int>(line.size())),
                  159);  // 158 bytes and one padding byte
        raw.resize(158);
        change(raw);
        std::string enc(220, '\0');
        enc.resize(static_cast<std::size_t>(
            EVP_EncodeBlock(reinterpret_cast<unsigned char*>(enc.data()), raw.data(), 158)));
        return ks::parse_secret_key(sk_text.substr(0, sk_text.find('\n') + 1) + enc + "\n");
    };
    auto zero_checksum = [](std::vector<std::uint8_t>& raw) {
        std::fill(raw.begin() + 126, raw.end(), 0);
    };
    // minisign 0.11 leaves the checksum of an unencrypted key zero: accepted.
    auto zeroed = edited(zero_checksum);
    ASSERT_TRUE(zeroed.ok()) << zeroed.error().message;
    EXPECT_EQ(zeroed->key, key.key);
    auto unknown_kdf = edited([](auto& raw) { raw[3] = 'c'; });
    ASSERT_FALSE(unknown_kdf.ok());
    EXPECT_EQ(unknown_kdf.error().code, SignErrc::malformed);
    EXPECT_NE(unknown_kdf.error().message.find("key derivation"), std::string::npos);
    auto bad_checksum = edited([](auto& raw) { raw[157] ^= 0x01; });
    ASSERT_FALSE(bad_checksum.ok());
    EXPECT_NE(bad_checksum.error().message.find("checksum does not match"), std::string::npos);
    auto bad_seed = edited([](auto& raw) { raw[70] ^= 0x01; });  // caught by the checksum
    ASSERT_FALSE(bad_seed.ok());
    EXPECT_NE(bad_seed.error().message.find("checksum does not match"), std::string::npos);
    auto bad_half = edited([&](auto& raw) {
        raw[100] ^= 0x01;
        zero_checksum(raw);
    });
    ASSERT_FALSE(bad_half.ok());
    EXPECT_NE(bad_half.error().message.find("public half does not belong"), std::string::npos);
    auto bad_alg = edited([](auto& raw) { raw[0] = 'X'; });
    ASSERT_FALSE(bad_alg.ok());
    EXPECT_NE(bad_alg.error().message.find("Ed25519"), std::string::npos);
    auto bad_chk_alg = edited([](auto& raw) { raw[5] = '3'; });
    ASSERT_FALSE(bad_chk_alg.ok());
    EXPECT_NE(bad_chk_alg.error().message.find("BLAKE2b"), std::string::npos);
    EXPECT_FALSE(ks::parse_secret_key(ks::format_public_key(key.public_key())).ok());
    EXPECT_FALSE(ks::parse_public_key(sk_text).ok());
}

TEST_F(StoreSignature, AnEncryptedSecretKeyIsUnsupportedNotMisread) {
    // minisign -G with a password: kdf "Sc" (scrypt).
    const std::string text =
        "untrusted comment: minisign encrypted secret key\n"
        "RWRTY0Iyr9JRoVu0brjhL/6bZPOjw6F99/hqBQT2/XiDWs/9qXoAAAACAAAAAAAAAEAAAAAAhFb8JGj+6JwRYd6FCg"
        "yFy4W5BCpMUWvqcJE4V6GUQcFBJiRNFgV8F2EiE9johd7slIb9/eHwqeOz31JGnyB35xn76jkzszoADI7ewlzxg2R"
        "jkXtGM4bO5ig4jg33nYYAT01DRvhPrXU=\n";
    auto sk = ks::parse_secret_key(text);
    ASSERT_FALSE(sk.ok());
    EXPECT_EQ(sk.error().code, SignErrc::unsupported);
    EXPECT_NE(sk.error().message.find("minisign -G -W"), std::string::npos);
}

TEST_F(StoreSignature, SignedPackVerifiesAndItsTrustedCommentNamesThePack) {
    const auto pack = make_pack("p");
    const ks::SecretKey key = new_key();
    auto sig = ks::sign_pack(pack, key);
    ASSERT_TRUE(sig.ok()) << sig.error().message;
    const auto& c = sig->trusted_comment;
    for (const char* part :
         {"schema:3", "entries:3", "producer:", "compiler:", "created:", "file:p.kcpack"}) {
        EXPECT_NE(c.find(part), std::string::npos) << part << " in " << c;
    }
    EXPECT_NE(c.find(sample_fields(0).compiler_id), std::string::npos) << c;
    EXPECT_NE(c.find(test_provenance().producer_version), std::string::npos) << c;

    const auto got = ks::check_pack_signature(pack, trusting(key));
    EXPECT_EQ(got.state, SignatureState::trusted) << got.detail;
    EXPECT_EQ(*got.key_id, key.id);
    EXPECT_EQ(got.trusted_comment, c);
    EXPECT_FALSE(ks::refusal(got, SignaturePolicy::require_trusted));
    // The signature on disk is the one returned, and parses back to it.
    auto read = ks::read_signature(ks::signature_path(pack));
    ASSERT_TRUE(read.ok());
    EXPECT_EQ(read->signature, sig->signature);
    EXPECT_EQ(ks::format_signature(*read), file_bytes(ks::signature_path(pack)));
}

TEST_F(StoreSignature, AFileThatIsNoPackIsNotSigned) {
    const auto garbage = dir() / "garbage.kcpack";
    write_file(garbage, std::string(8192, 'x'));
    auto sig = ks::sign_pack(garbage, new_key());
    ASSERT_FALSE(sig.ok());
    EXPECT_EQ(sig.error().code, ks::StoreErrc::corrupt) << sig.error().message;
    EXPECT_FALSE(std::filesystem::exists(ks::signature_path(garbage)));
}

TEST_F(StoreSignature, AFlippedByteAnywhereInThePackIsRefused) {
    const auto pack = make_pack("p");
    const ks::SecretKey key = new_key();
    ASSERT_TRUE(ks::sign_pack(pack, key).ok());
    const std::string original = file_bytes(pack);
    for (std::size_t offset :
         {std::size_t{0}, original.size() / 3, original.size() / 2, original.size() - 1}) {
        flip_byte(pack, offset);
        const auto got = ks::check_pack_signature(pack, trusting(key));
        EXPECT_EQ(got.state, SignatureState::invalid) << "offset " << offset;
        EXPECT_EQ(got.error, SignErrc::altered_content);
        auto why = ks::refusal(got, SignaturePolicy::require_trusted);
        ASSERT_TRUE(why);
        EXPECT_NE(why->find("does not match its signature"), std::string::npos) << *why;
        // Without the policy it is used, but never taken as signed.
        EXPECT_FALSE(ks::refusal(got, SignaturePolicy::report));
        write_file(pack, original);
    }
    EXPECT_EQ(ks::check_pack_signature(pack, trusting(key)).state, SignatureState::trusted);
}

TEST_F(StoreSignature, ASignatureOfAnotherFileOrAPackReplacedAfterSigningIsRefused) {
    const auto pack = make_pack("p");
    const auto other = make_pack("q");
    const ks::SecretKey key = new_key();
    ASSERT_TRUE(ks::sign_pack(other, key).ok());
    std::filesystem::copy_file(ks::signature_path(other), ks::signature_path(pack));
    auto got = ks::check_pack_signature(pack, trusting(key));
    EXPECT_EQ(got.state, SignatureState::invalid);
    EXPECT_EQ(got.error, SignErrc::altered_content);

    // Signed, then replaced by another (valid, unsigned) pack under the same name.
    ASSERT_TRUE(ks::sign_pack(pack, key).ok());
    EXPECT_EQ(ks::check_pack_signature(pack, trusting(key)).state, SignatureState::trusted);
    std::filesystem::copy_file(other, pack, std::filesystem::copy_options::overwrite_existing);
    got = ks::check_pack_signature(pack, trusting(key));
    EXPECT_EQ(got.state, SignatureState::invalid);
    EXPECT_NE(ks::refusal(got, SignaturePolicy::require_trusted)->find("replaced after signing"),
              std::string::npos);
}

TEST_F(StoreSignature, AnEditedTrustedCommentFailsTheGlobalSignature) {
    const auto pack = make_pack("p");
    const ks::SecretKey key = new_key();
    ASSERT_TRUE(ks::sign_pack(pack, key).ok());
    std::string text = file_bytes(ks::signature_path(pack));
    const auto at = text.find("schema:3");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 8, "schema:4");
    write_file(ks::signature_path(pack), text);
    const auto got = ks::check_pack_signature(pack, trusting(key));
    EXPECT_EQ(got.state, SignatureState::invalid);
    EXPECT_EQ(got.error, SignErrc::altered_comment);
    EXPECT_NE(ks::refusal(got, SignaturePolicy::require_trusted)->find("trusted comment"),
              std::string::npos);
    // The untrusted comment is not covered: editing it changes nothing.
    ASSERT_TRUE(ks::sign_pack(pack, key).ok());
    text = file_bytes(ks::signature_path(pack));
    text.replace(0, text.find('\n'), "untrusted comment: anything at all");
    write_file(ks::signature_path(pack), text);
    EXPECT_EQ(ks::check_pack_signature(pack, trusting(key)).state, SignatureState::trusted);
}

TEST_F(StoreSignature, AnUntrustedKeyAndAnUnsignedPackAreRefusedOnlyUnderThePolicy) {
    const auto pack = make_pack("p");
    auto got = ks::check_pack_signature(pack, trusting(new_key()));
    EXPECT_EQ(got.state, SignatureState::unsigned_pack);
    EXPECT_FALSE(ks::refusal(got, SignaturePolicy::report));
    EXPECT_NE(ks::refusal(got, SignaturePolicy::require_trusted)->find("unsigned"),
              std::string::npos);

    const ks::SecretKey signer = new_key();
    ASSERT_TRUE(ks::sign_pack(pack, signer).ok());
    got = ks::check_pack_signature(pack, trusting(new_key()));
    EXPECT_EQ(got.state, SignatureState::untrusted_key);
    EXPECT_EQ(*got.key_id, signer.id);
    EXPECT_FALSE(ks::refusal(got, SignaturePolicy::report));
    auto why = ks::refusal(got, SignaturePolicy::require_trusted);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find(ks::key_id_hex(signer.id) + ", which is not trusted"), std::string::npos);
}

TEST_F(StoreSignature, TruncatedOrGarbageSignatureFilesAreRefusedAsMalformed) {
    const auto pack = make_pack("p");
    const ks::SecretKey key = new_key();
    ASSERT_TRUE(ks::sign_pack(pack, key).ok());
    const auto sig_file = ks::signature_path(pack);
    const std::string good = file_bytes(sig_file);
    // Every truncation but the final newline's is malformed, none crashes.
    for (std::size_t n = 0; n + 1 < good.size(); ++n) {
        write_file(sig_file, good.substr(0, n));
        const auto got = ks::check_pack_signature(pack, trusting(key));
        ASSERT_EQ(got.state, SignatureState::invalid) << "truncated to " << n;
        ASSERT_EQ(got.error, SignErrc::malformed) << "truncated to " << n << ": " << got.detail;
    }
    std::mt19937 rng(11);
    for (int round = 0; round < 200; ++round) {
        std::string garbage(rng() % 400, '\0');
        for (char& c : garbage) {
            c = static_cast<char>(rng());
        }
        if (round % 2 == 0) {  // garbage after a plausible first line
            garbage = "untrusted comment: x\n" + garbage;
        }
        write_file(sig_file, garbage);
        const auto got = ks::check_pack_signature(pack, trusting(key));
        ASSERT_EQ(got.state, SignatureState::invalid);
        EXPECT_NE(ks::refusal(got, SignaturePolicy::require_trusted)->find("malformed"),
                  std::string::npos);
    }
    write_file(sig_file, std::string(100 * 1024, 'A'));
    EXPECT_NE(ks::check_pack_signature(pack, trusting(key)).detail.find("larger than 64 KiB"),
              std::string::npos);
    // A line named precisely: the global signature line is not base64.
    std::string bad = good;
    bad.replace(bad.rfind('\n', bad.size() - 2) + 1, 4, "!!!!");
    write_file(sig_file, bad);
    EXPECT_NE(ks::check_pack_signature(pack, trusting(key)).detail.find("line 4: not base64"),
              std::string::npos);
}

TEST_F(StoreSignature, TrustedKeysComeFromDirectoriesAndFilesAndBadOnesAreNamed) {
    const ks::SecretKey a = new_key();
    const ks::SecretKey b = new_key();
    std::filesystem::create_directories(dir() / "trusted.d");
    write_file(dir() / "trusted.d" / "a.pub", ks::format_public_key(a.public_key()));
    write_file(dir() / "trusted.d" / "a.key", ks::format_secret_key(a));  // not *.pub: ignored
    write_file(dir() / "trusted.d" / "broken.pub", "untrusted comment: x\nnot base64\n");
    write_file(dir() / "b.pub", ks::format_public_key(b.public_key()));
    const auto keys = ks::TrustedKeys::load({dir() / "trusted.d", dir() / "absent.d"},
                                            {dir() / "b.pub", dir() / "missing.pub"});
    EXPECT_EQ(keys.keys().size(), 2u);
    EXPECT_TRUE(keys.find(a.id));
    EXPECT_TRUE(keys.find(b.id));
    ASSERT_EQ(keys.problems().size(), 2u);
    EXPECT_NE(keys.problems()[0].find("broken.pub: line 2: not base64"), std::string::npos)
        << keys.problems()[0];
    EXPECT_NE(keys.problems()[1].find("missing.pub"), std::string::npos);
}

TEST_F(StoreSignature, TheWarmUpChecksRfc8032sFirstExample) {
    // On a thread of its own, as the remote client runs it, beside a check.
    bool warmed = false;
    std::thread t([&] { warmed = ks::warm_up_signature_checks(); });
    auto key = ks::generate_key();
    ASSERT_TRUE(key.ok());
    const std::vector<std::uint8_t> message(1000, 7);
    auto sig = ks::sign_message(*key, message);
    ASSERT_TRUE(sig.ok());
    EXPECT_TRUE(ks::verify_message(key->public_key(), message, *sig));
    t.join();
    EXPECT_TRUE(warmed);
}

TEST_F(StoreSignature, KeyFilesAreWrittenNewWithTheirModeAndNeverOverwritten) {
    const auto path = dir() / "k.key";
    ASSERT_TRUE(ks::write_text_file(path, "secret\n", 0600, ks::Replace::no).ok());
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    auto again = ks::write_text_file(path, "other\n", 0600, ks::Replace::no);
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.error().message.find("exists"), std::string::npos);
    EXPECT_EQ(file_bytes(path), "secret\n");
    ASSERT_TRUE(ks::write_text_file(path, "replaced\n", 0644, ks::Replace::yes).ok());
    EXPECT_EQ(file_bytes(path), "replaced\n");
}

}  // namespace
}  // namespace kcache::test
