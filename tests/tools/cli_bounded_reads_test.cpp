// Small files kcache reads (signatures, keys, the remote token, the remote
// state files) replaced by a FIFO without a writer or by /dev/zero: every
// command refuses them at once, naming the file, and never waits or fills
// memory. A short deadline turns a regression into a failure, not a hang.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "sign/cli_sign_fixture.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;

class CliBoundedReads : public CliSign {
  protected:
    void SetUp() override {
        CliSign::SetUp();
        cli_deadline_ = std::chrono::seconds(30);
    }
    // Puts a FIFO (kind "fifo") or a symlink to /dev/zero (kind "zero") at `p`.
    static void plant(const fs::path& p, const std::string& kind) {
        std::error_code ec;
        fs::remove(p, ec);
        if (kind == "fifo") {
            ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0) << p;
        } else {
            fs::create_symlink("/dev/zero", p);
        }
    }
    // The store directory, made the way kcache makes it.
    void make_store_dir() {
        fs::create_directories(store_dir());
        fs::permissions(store_dir(), fs::perms::owner_all);
    }
    // A remote that refuses connections at once, with `extra` settings.
    std::vector<std::string> remote_env(std::vector<std::string> extra = {}) {
        extra.push_back("KCACHE_REMOTE=http://127.0.0.1:1");
        extra.push_back("KCACHE_REMOTE_TIMEOUT_MS=2000");
        return extra;
    }
};

const std::vector<std::string> kKinds = {"fifo", "zero"};

bool mentions(const CliRun& r, const std::string& needle) {
    return r.out.find(needle) != std::string::npos || r.err.find(needle) != std::string::npos;
}

// Whether `doctor --json` reports a problem in `section` that names `needle`.
bool doctor_problem(const CliRun& doctor, const std::string& section, const std::string& needle) {
    for (const auto& f : doctor.json()) {
        if (f["section"] == section && f["level"] == "problem" &&
            f["value"].get<std::string>().find(needle) != std::string::npos) {
            return true;
        }
    }
    return false;
}

TEST_F(CliBoundedReads, ASignatureThatIsNotARegularFileIsInvalidEverywhere) {
    ASSERT_EQ(kcache({"keygen", "--output", path("k")}).code, 0);
    for (const std::string& kind : kKinds) {
        SCOPED_TRACE(kind);
        const auto pack = make_pack("p-" + kind);
        plant(store::signature_path(pack), kind);
        const CliRun verify = kcache_trusting({"verify", "--pack", pack.string()}, path("k.pub"));
        EXPECT_EQ(verify.code, 1) << verify.out << verify.err;
        EXPECT_TRUE(mentions(verify, "not a regular file")) << verify.out << verify.err;

        const CliRun refused = kcache_trusting({"import", pack.string()}, path("k.pub"), true);
        EXPECT_NE(refused.code, 0);
        EXPECT_TRUE(mentions(refused, "not a regular file")) << refused.err;
        const CliRun imported = kcache_trusting({"import", pack.string()}, path("k.pub"));
        EXPECT_EQ(imported.code, 0) << imported.err;  // used: signed packs are not required

        const CliRun doctor = kcache({"doctor", "--json"}, {"KCACHE_PACKS=" + pack.string(),
                                                            "KCACHE_TRUSTED_KEYS=" + path("k.pub"),
                                                            "XDG_CONFIG_HOME=" + path("config")});
        EXPECT_NE(doctor.code, -1);
        EXPECT_TRUE(mentions(doctor, "not a regular file")) << doctor.out;
    }
}

TEST_F(CliBoundedReads, ATrustedKeyThatIsNotARegularFileIsNotLoaded) {
    const fs::path trust_dir = dir() / "config" / "kcache" / "trusted.d";
    fs::create_directories(trust_dir);
    for (const std::string& kind : kKinds) {
        SCOPED_TRACE(kind);
        plant(dir() / "key.pub", kind);
        const CliRun named = kcache({"doctor", "--json"}, {"KCACHE_TRUSTED_KEYS=" + path("key.pub"),
                                                           "XDG_CONFIG_HOME=" + path("config")});
        EXPECT_NE(named.code, -1);
        // A FIFO is not read; /dev/zero (mode 0666) is refused before it is read.
        EXPECT_TRUE(doctor_problem(named, "trust", "key.pub")) << named.out;

        plant(trust_dir / "dir.pub", kind);
        const auto pack = make_pack("p-" + kind);
        const CliRun in_dir = kcache({"doctor", "--json"}, {"KCACHE_PACKS=" + pack.string(),
                                                            "XDG_CONFIG_HOME=" + path("config")});
        EXPECT_NE(in_dir.code, -1);
        EXPECT_TRUE(doctor_problem(in_dir, "trust", "dir.pub")) << in_dir.out;
    }
}

TEST_F(CliBoundedReads, ASigningKeyThatIsNotARegularFileIsRefused) {
    const auto pack = make_pack("p");
    for (const std::string& kind : kKinds) {
        SCOPED_TRACE(kind);
        plant(dir() / "secret.key", kind);
        const CliRun r = kcache({"sign", pack.string(), "--key", path("secret.key")});
        EXPECT_EQ(r.code, 2) << r.err;
        EXPECT_TRUE(mentions(r, "not a regular file")) << r.err;
        EXPECT_FALSE(fs::exists(store::signature_path(pack)));
    }
}

TEST_F(CliBoundedReads, ARemoteTokenFileThatIsNotARegularFileIsRefused) {
    for (const std::string& kind : kKinds) {
        SCOPED_TRACE(kind);
        plant(dir() / "token", kind);
        const CliRun r = kcache({"pull"}, remote_env({"KCACHE_REMOTE_TOKEN_FILE=" + path("token"),
                                                      "KCACHE_REMOTE_ALLOW_HTTP_TOKEN=1"}));
        EXPECT_EQ(r.code, 2) << r.err;
        EXPECT_TRUE(mentions(r, "token file: " + path("token") + ": not a regular file")) << r.err;
    }
}

TEST_F(CliBoundedReads, RemoteStateFilesThatAreNotRegularFilesReadAsAbsent) {
    make_store_dir();
    for (const std::string& kind : kKinds) {
        // The breaker's marks of remote_env()'s server (named as breaker.hpp says).
        for (const char* name :
             {"remote-stats", "remote-down.http___127.0.0.1_1", "remote-up.http___127.0.0.1_1"}) {
            SCOPED_TRACE(kind + " " + name);
            for (const char* command : {"stats", "pull", "doctor"}) {
                plant(store_dir() / name, kind);  // a pull replaces it
                const CliRun r = kcache({command}, remote_env());
                EXPECT_NE(r.code, -1) << command << ": " << r.err;
            }
        }
    }
}

}  // namespace
}  // namespace kcache::test
