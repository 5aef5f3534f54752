// Where trust comes from, through the CLI: doctor names trusted keys and
// packs that others could replace, and key ids two keys share; import
// refuses such a pack; verify --pack says what failed when a trusted key's
// signature does not verify.

#include <gtest/gtest.h>

#include <fstream>

#include "cli_sign_fixture.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;

// The doctor findings of `section` whose value names `needle`, with their levels.
std::vector<std::string> findings(const CliRun& doctor, const std::string& section,
                                  const std::string& needle) {
    std::vector<std::string> out;
    for (const auto& f : doctor.json()) {
        const std::string value = f["value"];
        if (f["section"] == section && value.find(needle) != std::string::npos) {
            out.push_back(f["level"].get<std::string>() + ": " + value);
        }
    }
    return out;
}

class CliTrust : public CliSign {
  protected:
    // kcache with the trusted key directory XDG_CONFIG_HOME/kcache/trusted.d
    // only, and `extra` settings.
    CliRun kcache_in(const std::vector<std::string>& args, std::vector<std::string> extra = {}) {
        extra.push_back("XDG_CONFIG_HOME=" + path("config"));
        return kcache(args, extra);
    }
    fs::path trust_dir() const { return dir() / "config" / "kcache" / "trusted.d"; }
    // A key pair k.key/k.pub and a pack signed with it, in `where`.
    fs::path signed_pack_in(const fs::path& where) {
        EXPECT_EQ(kcache({"keygen", "--output", path("k")}).code, 0);
        const fs::path made = make_pack("p");
        fs::create_directories(where);
        const fs::path pack = where / "p.kcpack";
        fs::rename(made, pack);
        EXPECT_EQ(kcache({"sign", pack.string(), "--key", path("k.key")}).code, 0);
        return pack;
    }
};

TEST_F(CliTrust, DoctorNamesKeysAndPacksOthersCouldReplaceAndImportRefusesThem) {
    const fs::path pack = signed_pack_in(dir() / "packs");
    fs::create_directories(trust_dir());
    fs::copy_file(path("k.pub"), trust_dir() / "k.pub");
    const CliRun good = kcache_in({"doctor", "--json"}, {"KCACHE_PACKS=" + pack.string()});
    EXPECT_EQ(findings(good, "packs", "signed by trusted key").size(), 1u) << good.out;

    fs::permissions(trust_dir(), fs::perms::all);
    fs::permissions(dir() / "packs", fs::perms::all);
    const CliRun bad = kcache_in({"doctor", "--json"}, {"KCACHE_PACKS=" + pack.string()});
    const auto trust = findings(bad, "trust", "trusted.d");
    ASSERT_EQ(trust.size(), 1u) << bad.out;
    EXPECT_NE(trust[0].find("problem: trusted key directory " + trust_dir().string() +
                            " is writable by group or others (mode 0777)"),
              std::string::npos)
        << trust[0];
    const auto packs = findings(bad, "packs", "unsafe location");
    ASSERT_EQ(packs.size(), 1u) << bad.out;
    EXPECT_NE(packs[0].find("problem: not used: in an unsafe location"), std::string::npos)
        << packs[0];

    const CliRun import = kcache_in({"import", pack.string()});
    EXPECT_EQ(import.code, 4) << import.err;  // the pack cannot be used
    EXPECT_NE(import.err.find("packs is writable by group or others (mode 0777)"),
              std::string::npos)
        << import.err;
}

TEST_F(CliTrust, VerifySaysWhatFailedWhenATrustedKeysSignatureDoesNotVerify) {
    const fs::path pack = signed_pack_in(dir() / "packs");
    std::string bytes = file_bytes(pack);
    bytes[bytes.size() / 2] ^= 0x20;
    std::ofstream(pack, std::ios::binary | std::ios::trunc) << bytes;
    const CliRun r = kcache_trusting({"verify", "--pack", pack.string()}, path("k.pub"));
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.out.find("(not trusted)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(trusted key; the signature does not verify)"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("does not verify: the pack was changed after signing"), std::string::npos)
        << r.out;
}

TEST_F(CliTrust, AKeyUnderATrustedKeysIdDoesNotShadowItAndDoctorNamesTheCollision) {
    const fs::path pack = signed_pack_in(dir() / "packs");
    auto real = ks::read_public_key(path("k.pub"));
    auto impostor = ks::generate_key();
    ASSERT_TRUE(real.ok() && impostor.ok());
    impostor->id = real->id;
    fs::create_directories(trust_dir());
    std::ofstream(trust_dir() / "a-impostor.pub") << ks::format_public_key(impostor->public_key());
    fs::copy_file(path("k.pub"), trust_dir() / "b-real.pub");

    const CliRun v =
        kcache_in({"verify", "--pack", pack.string(), "--json"}, {"KCACHE_REQUIRE_SIGNED_PACKS=1"});
    EXPECT_EQ(v.code, 0) << v.out << v.err;
    EXPECT_EQ(v.json()["signature"]["state"], "trusted") << v.out;
    const CliRun doctor = kcache_in({"doctor", "--json"}, {"KCACHE_PACKS=" + pack.string()});
    const auto collision = findings(doctor, "trust", "carried by two different keys");
    ASSERT_EQ(collision.size(), 1u) << doctor.out;
    EXPECT_NE(collision[0].find("a-impostor.pub"), std::string::npos) << collision[0];
}

}  // namespace
}  // namespace kcache::test
