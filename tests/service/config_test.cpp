// Configuration: environment over config file over defaults; malformed
// values are errors that name the variable (or file:line).

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <fstream>
#include <optional>

#include "cache_fixture.hpp"
#include "kcache/kcache.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

class ConfigTest : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        for (const char* v :
             {"KCACHE_DIR", "KCACHE_MAX_SIZE", "KCACHE_JIT_TIMEOUT_MS", "KCACHE_DISABLE",
              "KCACHE_READONLY", "KCACHE_PACKS", "KCACHE_JIT_PATH", "KCACHE_CONFIG",
              "KCACHE_JIT_HELPERS", "KCACHE_JIT_IDLE_MS", "KCACHE_MAX_PROGRAMS",
              "KCACHE_MAX_RESIDENT_BYTES", "KCACHE_MAX_HOT_BYTES", "KCACHE_TRUSTED_KEYS",
              "KCACHE_REQUIRE_SIGNED_PACKS", "KCACHE_DEVICE_DB"}) {
            ::unsetenv(v);
        }
        ::setenv("XDG_CONFIG_HOME", (dir() / "xdg").c_str(), 1);
        ::setenv("XDG_CACHE_HOME", (dir() / "cache").c_str(), 1);
        if (const char* t = std::getenv("TMPDIR")) {
            tmpdir_ = t;
        }
    }
    void TearDown() override {
        if (tmpdir_) {
            ::setenv("TMPDIR", tmpdir_->c_str(), 1);
        } else {
            ::unsetenv("TMPDIR");
        }
        TempDirTest::TearDown();
    }

  private:
    std::optional<std::string> tmpdir_;  // the test process's own TMPDIR, put back after
};

// The device-data override and the scratch directory reach the lower layers
// only through these two settings (they read no environment themselves).
TEST_F(ConfigTest, DeviceDataOverrideAndScratchDirectory) {
    ::unsetenv("TMPDIR");
    kcache::Config c;
    std::string err;
    ASSERT_TRUE(load_config(c, err)) << err;
    EXPECT_TRUE(c.device_db.empty());
    EXPECT_EQ(c.tmpdir, "/tmp");
    EXPECT_EQ(c.origins["device_db"].second, Source::default_value);
    EXPECT_EQ(c.origins["tmpdir"].second, Source::default_value);

    write_user_config(dir(), "device_db = /site/devices.json\ntmpdir = /scratch\n");
    ASSERT_TRUE(load_config(c, err)) << err;
    EXPECT_EQ(c.device_db, "/site/devices.json");
    EXPECT_EQ(c.origins["device_db"].second, Source::config_file);
    EXPECT_EQ(c.tmpdir, "/scratch");
    EXPECT_EQ(c.origins["tmpdir"].second, Source::config_file);

    ::setenv("KCACHE_DEVICE_DB", "/env/devices.json", 1);
    ::setenv("TMPDIR", "/env-tmp", 1);
    kcache::Config e;
    ASSERT_TRUE(load_config(e, err)) << err;
    EXPECT_EQ(e.device_db, "/env/devices.json");
    EXPECT_EQ(e.origins["device_db"].second, Source::environment);
    EXPECT_EQ(e.tmpdir, "/env-tmp");
    EXPECT_EQ(e.origins["tmpdir"].second, Source::environment);
    ::unsetenv("KCACHE_DEVICE_DB");

    ::setenv("TMPDIR", "", 1);  // empty, as for every program: /tmp
    kcache::Config empty;
    ASSERT_TRUE(load_config(empty, err)) << err;
    EXPECT_EQ(empty.tmpdir, "/tmp");
}

TEST_F(ConfigTest, DefaultsAndWhereTheyCameFrom) {
    kcache::Config c;
    std::string err;
    ASSERT_TRUE(load_config(c, err)) << err;
    EXPECT_EQ(c.dir, dir() / "cache" / "kcache");
    EXPECT_EQ(c.max_bytes, 1ull << 30);
    EXPECT_EQ(c.origins["max_size"].second, Source::default_value);
    EXPECT_EQ(c.max_programs, 1024u);
    EXPECT_EQ(c.max_resident_bytes, 64ull << 20);
    EXPECT_EQ(c.origins["max_programs"].second, Source::default_value);
    EXPECT_EQ(c.origins["max_resident_bytes"].second, Source::default_value);
    EXPECT_EQ(c.max_hot_bytes, 64ull << 20);
    EXPECT_EQ(c.origins["max_hot_bytes"].second, Source::default_value);
}

TEST_F(ConfigTest, InProcessBoundsFromFileAndEnvironment) {
    write_user_config(dir(), "max_programs = 16\nmax_resident_bytes = 8M\nmax_hot_bytes = 2M\n");
    ::setenv("KCACHE_MAX_RESIDENT_BYTES", "0", 1);
    kcache::Config c;
    std::string err;
    ASSERT_TRUE(load_config(c, err)) << err;
    EXPECT_EQ(c.max_programs, 16u);
    EXPECT_EQ(c.origins["max_programs"].second, Source::config_file);
    EXPECT_EQ(c.max_resident_bytes, 0u);
    EXPECT_EQ(c.origins["max_resident_bytes"].second, Source::environment);
    EXPECT_EQ(c.max_hot_bytes, 2ull << 20);
    EXPECT_EQ(c.origins["max_hot_bytes"].second, Source::config_file);
    ::unsetenv("KCACHE_MAX_RESIDENT_BYTES");
}

TEST_F(ConfigTest, EnvironmentBeatsFileBeatsDefault) {
    write_user_config(dir(), "# settings\nmax_size = 64M\njit_timeout_ms = 5000\n");
    ::setenv("KCACHE_JIT_TIMEOUT_MS", "250", 1);
    kcache::Config c;
    std::string err;
    ASSERT_TRUE(load_config(c, err)) << err;
    EXPECT_EQ(c.max_bytes, 64ull << 20);
    EXPECT_EQ(c.origins["max_size"].second, Source::config_file);
    EXPECT_EQ(c.jit_timeout.count(), 250);
    EXPECT_EQ(c.origins["jit_timeout_ms"].second, Source::environment);
}

TEST_F(ConfigTest, HelperPoolSettings) {
    kcache::Config defaults;
    std::string err;
    ASSERT_TRUE(load_config(defaults, err)) << err;
    EXPECT_EQ(defaults.jit_helpers, 4u);
    EXPECT_EQ(defaults.jit_idle.count(), 30000);
    write_user_config(dir(), "jit_helpers = 2\njit_idle_ms = 500\n");
    ::setenv("KCACHE_JIT_HELPERS", "0", 1);
    kcache::Config c;
    ASSERT_TRUE(load_config(c, err)) << err;
    EXPECT_EQ(c.jit_helpers, 0u);
    EXPECT_EQ(c.origins["jit_helpers"].second, Source::environment);
    EXPECT_EQ(c.jit_idle.count(), 500);
    EXPECT_EQ(c.origins["jit_idle_ms"].second, Source::config_file);
    ::unsetenv("KCACHE_JIT_HELPERS");
}

TEST_F(ConfigTest, MalformedValuesNameTheVariable) {
    expect_each_refused_naming_its_variable({
        {"KCACHE_MAX_SIZE", "lots"},
        {"KCACHE_MAX_SIZE", "0"},
        {"KCACHE_MAX_SIZE", "99999999999G"},
        {"KCACHE_JIT_TIMEOUT_MS", "-5"},
        {"KCACHE_JIT_TIMEOUT_MS", "2K"},
        {"KCACHE_DISABLE", "maybe"},
        {"KCACHE_READONLY", "2"},
        {"KCACHE_DIR", ""},
        {"KCACHE_JIT_HELPERS", "many"},
        {"KCACHE_JIT_HELPERS", "257"},
        {"KCACHE_JIT_HELPERS", "4K"},
        {"KCACHE_JIT_IDLE_MS", "0"},
        {"KCACHE_JIT_IDLE_MS", "-1"},
        {"KCACHE_MAX_PROGRAMS", "many"},
        {"KCACHE_MAX_PROGRAMS", "1K"},
        {"KCACHE_MAX_PROGRAMS", "2000000"},
        {"KCACHE_MAX_RESIDENT_BYTES", "-1"},
        {"KCACHE_MAX_RESIDENT_BYTES", "64Q"},
        {"KCACHE_MAX_HOT_BYTES", "-1"},
        {"KCACHE_MAX_HOT_BYTES", "lots"},
    });
}

TEST_F(ConfigTest, MalformedFileLineIsReported) {
    write_user_config(dir(), "max_size = 1G\ncolour = blue\n");
    kcache::Config c;
    std::string err;
    EXPECT_FALSE(load_config(c, err));
    EXPECT_NE(err.find("config:2:"), std::string::npos) << err;
    ::setenv("KCACHE_CONFIG", (dir() / "missing").c_str(), 1);
    EXPECT_FALSE(load_config(c, err));
    EXPECT_NE(err.find("KCACHE_CONFIG"), std::string::npos) << err;
}

TEST_F(ConfigTest, SignedPackSettingsAndTheTrustedKeyDirectories) {
    kcache::Config c;
    std::string err;
    ASSERT_TRUE(load_config(c, err)) << err;
    EXPECT_FALSE(c.require_signed_packs);
    EXPECT_TRUE(c.trusted_keys.empty());
    const std::vector<std::filesystem::path> dirs{"/etc/kcache/trusted.d",
                                                  dir() / "xdg" / "kcache" / "trusted.d"};
    EXPECT_EQ(c.trusted_key_dirs, dirs);

    write_user_config(dir(), "require_signed_packs = yes\ntrusted_keys = /k/a.pub\n");
    ::setenv("KCACHE_TRUSTED_KEYS", "/k/b.pub::/k/c.pub", 1);
    ASSERT_TRUE(load_config(c, err)) << err;
    EXPECT_TRUE(c.require_signed_packs);
    EXPECT_EQ(c.origins["require_signed_packs"].second, Source::config_file);
    const std::vector<std::filesystem::path> keys{"/k/b.pub", "/k/c.pub"};
    EXPECT_EQ(c.trusted_keys, keys);
    EXPECT_EQ(c.origins["trusted_keys"].second, Source::environment);

    ::setenv("KCACHE_REQUIRE_SIGNED_PACKS", "perhaps", 1);
    EXPECT_FALSE(load_config(c, err));
    EXPECT_NE(err.find("KCACHE_REQUIRE_SIGNED_PACKS"), std::string::npos) << err;
    ::unsetenv("KCACHE_REQUIRE_SIGNED_PACKS");
    write_user_config(dir(), "\nrequire_signed_packs = 2\n");
    EXPECT_FALSE(load_config(c, err));
    EXPECT_NE(err.find("config:2: require_signed_packs"), std::string::npos) << err;
}

TEST_F(ConfigTest, OpenDefaultReportsConfigError) {
    ::setenv("KCACHE_MAX_SIZE", "huge", 1);
    Outcome o;
    EXPECT_EQ(Cache::open_default(&o), nullptr);
    EXPECT_EQ(o.status, StatusCode::config_error);
    EXPECT_NE(o.message.find("KCACHE_MAX_SIZE"), std::string::npos);
}

}  // namespace
}  // namespace kcache::test
