#pragma once
// The fixture of the signed-pack CLI tests: kcache and Debian's `minisign`
// side by side in the test's directory, and a small pack to sign.

#include <gtest/gtest.h>

#include "cli_runner.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/sign/signature.hpp"
#include "store_fixture.hpp"

namespace kcache::test {

inline constexpr const char* kMinisign = "/usr/bin/minisign";

class CliSign : public CliTest {
  protected:
    void SetUp() override {
        CliTest::SetUp();
        ASSERT_TRUE(std::filesystem::exists(kMinisign)) << "minisign is not installed";
    }
    // Runs minisign with `args`, feeding `input` (passwords) on stdin.
    CliRun minisign(const std::vector<std::string>& args, const std::string& input = "") {
        compiler::SpawnSpec spec;
        spec.program = kMinisign;
        spec.args = args;
        spec.stdin_data = input;
        spec.env_overrides = {"HOME=" + dir().string()};
        const auto r = compiler::run(spec, compiler::Clock::now() + std::chrono::minutes(2));
        EXPECT_EQ(r.outcome, compiler::ChildExit::exited) << r.err;
        return {r.exit_code, r.out, r.err};
    }
    // kcache with no trusted keys but `trusted` (and the policy when `require`).
    CliRun kcache_trusting(const std::vector<std::string>& args, const std::string& trusted,
                           bool require = false) {
        return kcache(args, {"XDG_CONFIG_HOME=" + (dir() / "config").string(),
                             "KCACHE_TRUSTED_KEYS=" + trusted,
                             std::string("KCACHE_REQUIRE_SIGNED_PACKS=") + (require ? "1" : "0")});
    }
    // A pack of three entries (made the way `kcache export` makes one).
    std::filesystem::path make_pack(const std::string& name) {
        auto store = ks::Store::open(dir() / ("src-" + name), ks::Policy{});
        EXPECT_TRUE(store.ok());
        for (int i = 0; i < 3; ++i) {
            EXPECT_TRUE(store->put(sample_fields(i), binary_like(3000, i), test_provenance()).ok());
        }
        const auto pack = dir() / (name + ".kcpack");
        EXPECT_TRUE(store->export_pack(pack).ok());
        return pack;
    }
    std::string path(const std::string& name) const { return (dir() / name).string(); }
};

}  // namespace kcache::test
