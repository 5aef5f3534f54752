// A password-protected minisign key (`minisign -G`, scrypt: about a minute of
// CPU for the key and again for the signature), hence slow.

#include "cli_sign_fixture.hpp"

namespace kcache::test {
namespace {

TEST_F(CliSign, KcacheVerifiesASignatureByAPasswordProtectedMinisignKey) {
    const auto pack = make_pack("p");
    ASSERT_EQ(minisign({"-G", "-p", path("e.pub"), "-s", path("e.key")}, "pw\npw\n").code, 0);
    ASSERT_EQ(
        minisign({"-S", "-s", path("e.key"), "-m", pack.string(), "-t", "release 1.2"}, "pw\n")
            .code,
        0);
    const CliRun r = kcache_trusting({"verify", "--pack", pack.string(), "--json"}, path("e.pub"));
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.json()["signature"]["state"], "trusted");
    EXPECT_EQ(r.json()["signature"]["trusted_comment"], "release 1.2");
    // kcache cannot sign with the encrypted key, and says what to do instead.
    const CliRun enc = kcache({"sign", pack.string(), "--key", path("e.key")});
    EXPECT_EQ(enc.code, 2);
    EXPECT_NE(enc.err.find("encrypted secret key"), std::string::npos) << enc.err;
    EXPECT_NE(enc.err.find("minisign -G -W"), std::string::npos) << enc.err;
}

}  // namespace
}  // namespace kcache::test
