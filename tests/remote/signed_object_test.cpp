// Signed objects against a real nginx whose objects a hostile party replaced
// on disk (what a server, a PUT by anyone, or a plain-http path can do):
// payloads swapped with their checksum recomputed, unsigned objects,
// signatures by keys not trusted, a valid object replayed under another key;
// and credentials in a plain http:// URL.

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "kcache/remote/envelope.hpp"
#include "kcache/remote/remote.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

using remote::ObjectSignatures;
using remote::RemoteErrc;

class RemoteSigned : public RemoteServerTest {
  protected:
    // A node with the defaults: signatures required, the test key trusted.
    remote::Settings settings() const { return test_settings(server_->url(), dir() / "state"); }
    std::filesystem::path object(int n) const {
        return server_->object_file(store::make_key(made_up_fields(n)).hex());
    }
    // Puts `bytes` on the server as the object of entry `n`.
    void serve(int n, const store::Bytes& bytes) const {
        std::filesystem::create_directories(object(n).parent_path());
        std::ofstream(object(n), std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()),
                   static_cast<std::streamsize>(bytes.size()));
    }
    static store::Bytes read(const std::filesystem::path& file) {
        std::ifstream in(file, std::ios::binary);
        return store::Bytes(std::istreambuf_iterator<char>(in), {});
    }
    // Fetches entry `n`; expects a corrupt-class refusal whose message holds `why`.
    void expect_refused(remote::Client& c, int n, const std::string& why, RemoteErrc code) {
        auto got = c.fetch(made_up_fields(n));
        ASSERT_FALSE(got) << "served: " << why;
        EXPECT_EQ(got.error().code, code) << got.error().message;
        EXPECT_NE(got.error().message.find(why), std::string::npos) << got.error().message;
    }
};

// The object of entry 1 with `raw` as its payload and its checksum
// recomputed, carrying the signature block of `original` (the writer's).
store::Bytes payload_swapped(const store::Bytes& original, const store::Bytes& raw) {
    store::Bytes forged = remote::encode_envelope(made_up_fields(1), raw, made_up_provenance());
    constexpr std::size_t kBlock = 10 + store::kKeyIdBytes + store::kSignatureBytes;
    forged.insert(forged.end(), original.end() - kBlock, original.end());
    return forged;
}

TEST_F(RemoteSigned, UploadsAreSignedAndVerifiedOnTheWayBack) {
    auto c = client(settings());
    ASSERT_TRUE(c->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    ASSERT_TRUE(c->signing_key());
    EXPECT_EQ(*c->signing_key(), test_signing_key().id);
    auto got = c->fetch(made_up_fields(1));
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->bytes, made_up_bytes(1));
}

// A payload replaced with its checksum recomputed passes every check but the
// signature: truncated, another entry's binary, random bytes. Each is a
// counted corrupt miss, under either policy (a trusted key's signature that
// does not match is never taken as unsigned).
TEST_F(RemoteSigned, APayloadSwappedWithItsChecksumRecomputedIsRefused) {
    auto writer = client(settings());
    ASSERT_TRUE(writer->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    const store::Bytes original = read(object(1));
    const store::Bytes bytes = made_up_bytes(1);
    const store::Bytes truncated(bytes.begin(), bytes.begin() + bytes.size() / 2);
    store::Bytes random(4096);
    for (std::size_t i = 0; i < random.size(); ++i) {
        random[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 13);
    }
    auto lax_settings = settings();
    lax_settings.signatures = ObjectSignatures::accept_unsigned;
    auto lax = client(lax_settings);
    int refused = 0;
    for (const store::Bytes& raw : {truncated, made_up_bytes(2), random}) {
        serve(1, payload_swapped(original, raw));
        auto reader = client(settings());
        expect_refused(*reader, 1, "does not match the object", RemoteErrc::corrupt);
        expect_refused(*lax, 1, "does not match the object", RemoteErrc::corrupt);
        EXPECT_EQ(reader->counters().corrupt, 1u);
        ++refused;
    }
    EXPECT_EQ(refused, 3);
    EXPECT_EQ(lax->counters().corrupt, 3u);
    serve(1, original);  // the writer's own object still verifies
    EXPECT_TRUE(client(settings())->fetch(made_up_fields(1)));
}

// Unsigned objects (an old writer, or a forger who dropped the signature)
// are a miss that says how to set up keys; with the policy off they are used.
TEST_F(RemoteSigned, UnsignedObjectsAreAMissUnderThePolicyAndUsedWithoutIt) {
    serve(1, remote::encode_envelope(made_up_fields(1), made_up_bytes(2), made_up_provenance()));
    auto strict = client(settings());
    expect_refused(*strict, 1, "KCACHE_REMOTE_SIGNING_KEY", RemoteErrc::corrupt);
    EXPECT_EQ(strict->counters().corrupt, 1u);
    auto held = strict->held(made_up_fields(1));  // push replaces it
    ASSERT_TRUE(held) << held.error().message;
    EXPECT_EQ(held->holding, remote::Holding::unusable);

    auto off = settings();
    off.signatures = ObjectSignatures::accept_unsigned;
    auto got = client(off)->fetch(made_up_fields(1));
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->bytes, made_up_bytes(2));
}

// A key the node does not trust vouches for nothing, however valid its signature.
TEST_F(RemoteSigned, ASignatureByAKeyNotTrustedIsRefused) {
    auto object = remote::sign_envelope(
        remote::encode_envelope(made_up_fields(1), made_up_bytes(2), made_up_provenance()),
        other_signing_key());
    ASSERT_TRUE(object);
    serve(1, *object);
    auto c = client(settings());
    expect_refused(*c, 1, "does not trust", RemoteErrc::corrupt);
    EXPECT_EQ(c->counters().corrupt, 1u);
}

// The signature covers the key fields: a whole, validly signed object of
// another entry served under this entry's key is refused.
TEST_F(RemoteSigned, AValidObjectReplayedUnderAnotherKeyIsRefused) {
    auto writer = client(settings());
    ASSERT_TRUE(writer->upload(made_up_fields(2), made_up_bytes(2), made_up_provenance()));
    serve(1, read(object(2)));
    auto c = client(settings());
    expect_refused(*c, 1, "not the requested key", RemoteErrc::wrong_key);
    EXPECT_EQ(c->counters().corrupt, 1u);
}

// Signatures are required and there is no key: nothing is sent, and the
// reason says what to set.
TEST_F(RemoteSigned, WithoutASigningKeyNothingIsUploaded) {
    auto s = settings();
    s.signing_key_file.clear();
    auto c = client(s);
    EXPECT_FALSE(c->signing_key());
    ASSERT_TRUE(c->why_no_uploads());
    EXPECT_NE(c->why_no_uploads()->find("KCACHE_REMOTE_SIGNING_KEY"), std::string::npos);
    auto up = c->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance());
    ASSERT_FALSE(up);
    EXPECT_EQ(up.error().code, RemoteErrc::config);
    c->enqueue(made_up_fields(2), made_up_bytes(2), made_up_provenance());
    EXPECT_EQ(c->flush(Millis(2000)), 0u);
    EXPECT_EQ(server_->count("PUT"), 0u);

    s.signatures = ObjectSignatures::accept_unsigned;  // the policy off: unsigned uploads
    ASSERT_TRUE(client(s)->upload(made_up_fields(1), made_up_bytes(1), made_up_provenance()));
    EXPECT_EQ(server_->count("PUT"), 1u);
}

TEST_F(RemoteSigned, AnUnreadableSigningKeyRefusesToOpen) {
    auto s = settings();
    s.signing_key_file = dir() / "absent.key";
    auto c = remote::Client::open(s);
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, RemoteErrc::config);
    EXPECT_NE(c.error().message.find("KCACHE_REMOTE_SIGNING_KEY"), std::string::npos);
}

// Credentials in a URL go over plain http only when allowed, as a token does.
TEST_F(RemoteSigned, CredentialsInAPlainHttpUrlAreRefused) {
    const std::string url = server_->url();
    const std::string with_user = "http://kc:s3cret@" + url.substr(7);
    auto c = remote::Client::open(test_settings(with_user, dir() / "state"));
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().code, RemoteErrc::config);
    EXPECT_NE(c.error().message.find("plain http"), std::string::npos) << c.error().message;
    EXPECT_EQ(c.error().message.find("s3cret"), std::string::npos) << c.error().message;
    EXPECT_EQ(server_->requests().size(), 0u);
    // An '@' in the path is no credential.
    EXPECT_TRUE(remote::Client::open(test_settings(url + "/a@b", dir() / "state")));
    auto allowed = test_settings(with_user, dir() / "state");
    allowed.plain_http_token = remote::PlainHttpToken::allow;
    EXPECT_TRUE(remote::Client::open(allowed));
    EXPECT_TRUE(remote::Client::open(test_settings("https://kc:s3cret@example.invalid", dir())));
}

}  // namespace
}  // namespace kcache::test
