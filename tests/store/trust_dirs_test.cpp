// Where trust comes from: trusted keys and packs that someone other than root
// and the user could replace are refused with a reason naming the path; a
// key that shares a trusted key's id does not shadow it; a signature that
// does not verify says what failed; key and signature files that are FIFOs
// or devices are refused without blocking.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "kcache/store/trust.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;
using ks::SignaturePolicy;
using ks::SignatureState;

void write_with_mode(const fs::path& p, const std::string& text, fs::perms mode) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
    fs::permissions(p, mode);
}

constexpr auto kKeyMode = fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                          fs::perms::others_read;  // 0644

ks::SecretKey generated_key() {
    auto k = ks::generate_key();
    EXPECT_TRUE(k.ok());
    return k ? *k : ks::SecretKey{};
}

bool any_contains(const std::vector<std::string>& all, const std::string& a,
                  const std::string& b = "") {
    for (const std::string& s : all) {
        if (s.find(a) != std::string::npos && s.find(b) != std::string::npos) {
            return true;
        }
    }
    return false;
}

std::string joined(const std::vector<std::string>& all) {
    std::string out;
    for (const std::string& s : all) {
        out += s + "\n";
    }
    return out;
}

class StoreTrustDirs : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        key_ = generated_key();
    }
    // A pack of three entries in `where`, signed with key_.
    fs::path signed_pack(const fs::path& where, const std::string& name) {
        auto store = ks::Store::open(dir() / ("store-" + name), ks::Policy{});
        EXPECT_TRUE(store.ok());
        for (int i = 0; i < 3; ++i) {
            EXPECT_TRUE(store->put(sample_fields(i), binary_like(4000, i), test_provenance()).ok());
        }
        fs::create_directories(where);
        const fs::path pack = where / (name + ".kcpack");
        EXPECT_TRUE(store->export_pack(pack).ok());
        EXPECT_TRUE(ks::sign_pack(pack, key_).ok());
        return pack;
    }
    // key_'s public key as `name` in `where` (mode 0644).
    fs::path pub_in(const fs::path& where, const std::string& name = "k.pub") {
        fs::create_directories(where);
        write_with_mode(where / name, ks::format_public_key(key_.public_key()), kKeyMode);
        return where / name;
    }
    // A world-writable sticky directory, like /tmp.
    fs::path sticky_dir() {
        const fs::path d = dir() / "sticky";
        fs::create_directories(d);
        fs::permissions(d, fs::perms::all | fs::perms::sticky_bit);
        return d;
    }
    ks::SecretKey key_;
};

TEST_F(StoreTrustDirs, KeysAndSignaturesThatAreNotRegularFilesAreRefusedAtOnce) {
    const fs::path pack = signed_pack(dir() / "packs", "p");
    const fs::path sig = ks::signature_path(pack);
    const fs::path trusted = dir() / "trusted";
    fs::create_directories(trusted);
    for (const char* kind : {"fifo", "zero"}) {
        SCOPED_TRACE(kind);
        fs::remove(sig);
        fs::remove(trusted / "x.pub");
        if (std::string(kind) == "fifo") {
            ASSERT_EQ(::mkfifo(sig.c_str(), 0600), 0);
            ASSERT_EQ(::mkfifo((trusted / "x.pub").c_str(), 0600), 0);
        } else {
            fs::create_symlink("/dev/zero", sig);
            fs::create_symlink("/dev/zero", trusted / "x.pub");
        }
        const auto keys = ks::TrustedKeys::load({trusted}, {pub_in(dir() / "keys")});
        EXPECT_EQ(keys.keys().size(), 1u);
        EXPECT_TRUE(any_contains(keys.problems(), "x.pub")) << joined(keys.problems());
        const auto got = ks::check_pack_signature(pack, keys);
        EXPECT_EQ(got.state, SignatureState::invalid);
        EXPECT_NE(got.detail.find("not a regular file"), std::string::npos) << got.detail;
        EXPECT_TRUE(ks::refusal(got, SignaturePolicy::require_trusted));
    }
}

TEST_F(StoreTrustDirs, AKeyInALocationOthersCanWriteIsNotTrusted) {
    const fs::path pack = signed_pack(dir() / "packs", "p");
    // Each case: the trusted directories and files, and what the problem names.
    struct Case {
        const char* name;
        std::function<std::pair<std::vector<fs::path>, std::vector<fs::path>>()> make;
        const char* named;
    };
    const std::vector<Case> cases = {
        {"0777 directory",
         [&] {
             const fs::path d = dir() / "open.d";
             pub_in(d);
             fs::permissions(d, fs::perms::all);
             return std::pair{std::vector{d}, std::vector<fs::path>{}};
         },
         "writable by group or others (mode 0777)"},
        {"symlink to a 1777 directory",
         [&] {
             pub_in(sticky_dir());
             fs::create_directory_symlink(sticky_dir(), dir() / "link.d");
             return std::pair{std::vector{dir() / "link.d"}, std::vector<fs::path>{}};
         },
         "(mode 1777)"},
        {"0666 .pub",
         [&] {
             const fs::path p = pub_in(dir() / "wide");
             fs::permissions(p, kKeyMode | fs::perms::group_write | fs::perms::others_write);
             return std::pair{std::vector{dir() / "wide"}, std::vector{p}};
         },
         "k.pub is writable by group or others (mode 0666)"},
        {"symlink into a 1777 directory",
         [&] {
             const fs::path target = pub_in(sticky_dir(), "real.pub");
             fs::create_directories(dir() / "via");
             fs::create_symlink(target, dir() / "via" / "k.pub");
             return std::pair{std::vector<fs::path>{}, std::vector{dir() / "via" / "k.pub"}};
         },
         "its directory "},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const auto [dirs, files] = c.make();
        const auto keys = ks::TrustedKeys::load(dirs, files);
        EXPECT_TRUE(keys.keys().empty());
        EXPECT_TRUE(any_contains(keys.problems(), c.named)) << joined(keys.problems());
        const auto got = ks::check_pack_signature(pack, keys);
        EXPECT_EQ(got.state, SignatureState::untrusted_key);
        EXPECT_TRUE(ks::refusal(got, SignaturePolicy::require_trusted));
        fs::remove_all(dir() / "sticky");
        fs::remove_all(dir() / "link.d");
    }
    // The same key from a safe place is trusted.
    const auto keys = ks::TrustedKeys::load({}, {pub_in(dir() / "safe")});
    EXPECT_TRUE(keys.problems().empty()) << joined(keys.problems());
    EXPECT_EQ(ks::check_pack_signature(pack, keys).state, SignatureState::trusted);
}

TEST_F(StoreTrustDirs, AKeyOrDirectoryOwnedByAnotherUserIsNotTrusted) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "needs root to give files to another user (CI runs as root)";
    }
    const fs::path pack = signed_pack(dir() / "packs", "p");
    const fs::path theirs = dir() / "theirs.d";
    const fs::path file = pub_in(theirs);
    ASSERT_EQ(::chown(theirs.c_str(), kNobody, kNobody), 0);
    auto keys = ks::TrustedKeys::load({theirs}, {});
    EXPECT_TRUE(keys.keys().empty());
    EXPECT_TRUE(any_contains(keys.problems(), "theirs.d", "owned by uid 65534"))
        << joined(keys.problems());
    ASSERT_EQ(::chown(theirs.c_str(), 0, 0), 0);
    ASSERT_EQ(::chown(file.c_str(), kNobody, kNobody), 0);
    keys = ks::TrustedKeys::load({theirs}, {});
    EXPECT_TRUE(keys.keys().empty());
    EXPECT_TRUE(any_contains(keys.problems(), "k.pub is owned by uid 65534"))
        << joined(keys.problems());

    // As an ordinary user: root's files and the user's own are trusted, another user's are not.
    fs::permissions(dir(), fs::perms::owner_all | fs::perms::others_exec | fs::perms::group_exec);
    const fs::path mine = dir() / "nobody.d";
    fs::create_directories(mine);
    for (const char* name : {"root.pub", "own.pub", "other.pub"}) {
        write_with_mode(mine / name, ks::format_public_key(generated_key().public_key()), kKeyMode);
    }
    ASSERT_EQ(::chown(mine.c_str(), kNobody, kNobody), 0);
    ASSERT_EQ(::chown((mine / "own.pub").c_str(), kNobody, kNobody), 0);
    ASSERT_EQ(::chown((mine / "other.pub").c_str(), kNobody + 1, kNobody + 1), 0);
    EXPECT_EQ(
        run_as_user(kNobody,
                    [&]() -> std::string {
                        const auto k = ks::TrustedKeys::load({mine}, {});
                        const auto& p = k.problems();
                        if (k.keys().size() != 2 || p.size() != 1 ||
                            p[0].find("other.pub is owned by uid 65535") == std::string::npos) {
                            return "keys " + std::to_string(k.keys().size()) + ": " + joined(p);
                        }
                        return "";
                    }),
        "");
}

TEST_F(StoreTrustDirs, APackOthersCouldReplaceIsRefusedUnderEveryPolicy) {
    const fs::path pack = signed_pack(dir() / "open-packs", "p");
    const auto keys = ks::TrustedKeys::load({}, {pub_in(dir() / "keys")});
    ASSERT_EQ(ks::check_pack_signature(pack, keys).state, SignatureState::trusted);
    fs::permissions(dir() / "open-packs", fs::perms::all);
    fs::permissions(pack, kKeyMode | fs::perms::group_write | fs::perms::others_write);
    for (auto policy : {SignaturePolicy::report, SignaturePolicy::require_trusted}) {
        const auto checked = ks::open_checked_pack(pack, keys, policy);
        ASSERT_TRUE(checked.refused);
        EXPECT_NE(checked.refused->find("unsafe location: " + pack.string()), std::string::npos)
            << *checked.refused;
        EXPECT_NE(checked.refused->find("(mode 0666)"), std::string::npos) << *checked.refused;
        EXPECT_FALSE(checked.pack);
    }
    // The pack alone is safe, but its directory is not.
    fs::permissions(pack, kKeyMode);
    const auto got = ks::check_pack_signature(pack, keys);
    EXPECT_NE(got.unsafe_location.find("open-packs is writable by group or others (mode 0777)"),
              std::string::npos)
        << got.unsafe_location;
    EXPECT_TRUE(ks::refusal(got, SignaturePolicy::report));
    fs::permissions(dir() / "open-packs", fs::perms::owner_all);
    const auto safe = ks::open_checked_pack(pack, keys, SignaturePolicy::require_trusted);
    EXPECT_FALSE(safe.refused);
    EXPECT_TRUE(safe.pack) << safe.error;
}

TEST_F(StoreTrustDirs, AnotherKeyUnderATrustedKeysIdDoesNotShadowIt) {
    const fs::path pack = signed_pack(dir() / "packs", "p");
    ks::SecretKey impostor = generated_key();
    impostor.id = key_.id;  // same id, another key
    const fs::path trusted = dir() / "trusted.d";
    fs::create_directories(trusted);
    write_with_mode(trusted / "a-impostor.pub", ks::format_public_key(impostor.public_key()),
                    kKeyMode);
    pub_in(trusted, "b-real.pub");
    const auto keys = ks::TrustedKeys::load({trusted}, {});
    EXPECT_EQ(keys.keys().size(), 2u);
    EXPECT_EQ(keys.matching(key_.id).size(), 2u);
    EXPECT_TRUE(any_contains(keys.problems(), "carried by two different keys", "a-impostor.pub"))
        << joined(keys.problems());
    const auto got = ks::check_pack_signature(pack, keys);
    EXPECT_EQ(got.state, SignatureState::trusted) << got.detail;
    EXPECT_NE(got.detail.find("b-real.pub"), std::string::npos) << got.detail;

    // A pack signed by the impostor verifies against the impostor's key only.
    const fs::path other = signed_pack(dir() / "packs", "q");
    ASSERT_TRUE(ks::sign_pack(other, impostor).ok());
    EXPECT_EQ(ks::check_pack_signature(other, keys).state, SignatureState::trusted);
    // The same key in two files is one key, no collision.
    pub_in(dir() / "again", "copy.pub");
    const auto twice = ks::TrustedKeys::load({trusted}, {dir() / "again" / "copy.pub"});
    EXPECT_EQ(twice.keys().size(), 2u);
    EXPECT_EQ(twice.problems().size(), 1u) << joined(twice.problems());
}

TEST_F(StoreTrustDirs, ASignatureByATrustedKeyThatDoesNotVerifySaysWhatFailed) {
    const fs::path pack = signed_pack(dir() / "packs", "p");
    const auto keys = ks::TrustedKeys::load({}, {pub_in(dir() / "keys")});
    std::string bytes = file_bytes(pack);
    bytes[bytes.size() / 2] ^= 0x10;
    write_with_mode(pack, bytes, kKeyMode);
    const auto got = ks::check_pack_signature(pack, keys);
    EXPECT_EQ(got.state, SignatureState::invalid);
    EXPECT_TRUE(got.key_trusted);
    EXPECT_NE(got.detail.find("signature by trusted key " + ks::key_id_hex(key_.id) +
                              " does not verify: the pack was changed after signing"),
              std::string::npos)
        << got.detail;
}

}  // namespace
}  // namespace kcache::test
