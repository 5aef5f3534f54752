// The envelope alone: a round trip, and every way an object can be damaged.

#include <gtest/gtest.h>

#include "kcache/remote/envelope.hpp"
#include "remote_support.hpp"

namespace kcache::test {
namespace {

using remote::EnvelopeErrc;

// These tests are about the object's structure: read as a node that takes
// unsigned objects (signatures: signed_object_test.cpp).
const remote::ObjectTrust kUnsigned{remote::ObjectSignatures::accept_unsigned, nullptr};

TEST(RemoteEnvelope, RoundTripKeepsFieldsProvenanceAndBytes) {
    const auto fields = made_up_fields(1);
    const auto bytes = made_up_bytes(1);
    const auto object = remote::encode_envelope(fields, bytes, made_up_provenance());
    EXPECT_LT(object.size(), bytes.size());  // the payload is compressed
    auto env = remote::decode_envelope(object, store::make_key(fields), 1 << 20, kUnsigned);
    ASSERT_TRUE(env) << env.error().message;
    EXPECT_EQ(env->bytes, bytes);
    EXPECT_EQ(env->fields, store::normalized(fields));
    EXPECT_EQ(env->provenance.build_log, "build ok");
    EXPECT_EQ(env->provenance.build_time_ms, 1234);
}

TEST(RemoteEnvelope, EveryTruncationIsRefused) {
    const auto fields = made_up_fields(2);
    const auto object =
        remote::encode_envelope(fields, made_up_bytes(2, 512), made_up_provenance());
    const auto key = store::make_key(fields);
    for (std::size_t n = 0; n < object.size(); ++n) {
        auto env = remote::decode_envelope(std::span(object).first(n), key, 1 << 20, kUnsigned);
        ASSERT_FALSE(env) << "a prefix of " << n << " bytes was accepted";
    }
}

TEST(RemoteEnvelope, TrailingBytesAreRefused) {
    const auto fields = made_up_fields(3);
    auto object = remote::encode_envelope(fields, made_up_bytes(3, 512), made_up_provenance());
    object.push_back(0);
    auto env = remote::decode_envelope(object, store::make_key(fields), 1 << 20, kUnsigned);
    ASSERT_FALSE(env);
    EXPECT_EQ(env.error().code, EnvelopeErrc::malformed);
}

TEST(RemoteEnvelope, NoFlippedByteYieldsOtherBytesOrAnotherKey) {
    const auto fields = made_up_fields(4);
    const auto object =
        remote::encode_envelope(fields, made_up_bytes(4, 256), made_up_provenance());
    const auto key = store::make_key(fields);
    for (std::size_t i = 0; i < object.size(); ++i) {
        auto damaged = object;
        damaged[i] ^= 0x01;
        auto env = remote::decode_envelope(damaged, key, 1 << 20, kUnsigned);
        // The provenance and the (descriptive) kernel name are covered by
        // neither the key nor the checksum; a flip there may be accepted, but
        // never with other bytes or for another key.
        if (env) {
            EXPECT_EQ(env->bytes, made_up_bytes(4, 256)) << "byte " << i;
            EXPECT_EQ(store::make_key(env->fields), key) << "byte " << i;
        }
    }
}

TEST(RemoteEnvelope, ObjectOfAnotherKeyIsRefused) {
    const auto object =
        remote::encode_envelope(made_up_fields(5), made_up_bytes(5, 256), made_up_provenance());
    auto env =
        remote::decode_envelope(object, store::make_key(made_up_fields(6)), 1 << 20, kUnsigned);
    ASSERT_FALSE(env);
    EXPECT_EQ(env.error().code, EnvelopeErrc::wrong_key);
}

TEST(RemoteEnvelope, PayloadOverTheCapIsRefusedBeforeDecoding) {
    const auto fields = made_up_fields(7);
    const auto object =
        remote::encode_envelope(fields, made_up_bytes(7, 8192), made_up_provenance());
    auto env = remote::decode_envelope(object, store::make_key(fields), 4096, kUnsigned);
    ASSERT_FALSE(env);
    EXPECT_EQ(env.error().code, EnvelopeErrc::too_large);
}

TEST(RemoteEnvelope, NotAnEnvelopeIsRefused) {
    const std::string html = "<html>502 Bad Gateway</html>";
    auto env = remote::decode_envelope(
        std::span(reinterpret_cast<const std::uint8_t*>(html.data()), html.size()),
        store::make_key(made_up_fields(8)), 1 << 20, kUnsigned);
    ASSERT_FALSE(env);
    EXPECT_EQ(env.error().code, EnvelopeErrc::malformed);
}

}  // namespace
}  // namespace kcache::test
