// Configuration: environment over config file over defaults; malformed
// values are errors that name the variable (or file:line).

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>

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
              "KCACHE_MAX_PROGRAMS", "KCACHE_MAX_RESIDENT_BYTES"}) {
            ::unsetenv(v);
        }
        ::setenv("XDG_CONFIG_HOME", (dir() / "xdg").c_str(), 1);
        ::setenv("XDG_CACHE_HOME", (dir() / "cache").c_str(), 1);
    }
};

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
}

TEST_F(ConfigTest, InProcessBoundsFromFileAndEnvironment) {
    std::filesystem::create_directories(dir() / "xdg" / "kcache");
    std::ofstream(dir() / "xdg" / "kcache" / "config")
        << "max_programs = 16\nmax_resident_bytes = 8M\n";
    ::setenv("KCACHE_MAX_RESIDENT_BYTES", "0", 1);
    kcache::Config c;
    std::string err;
    ASSERT_TRUE(load_config(c, err)) << err;
    EXPECT_EQ(c.max_programs, 16u);
    EXPECT_EQ(c.origins["max_programs"].second, Source::config_file);
    EXPECT_EQ(c.max_resident_bytes, 0u);
    EXPECT_EQ(c.origins["max_resident_bytes"].second, Source::environment);
    ::unsetenv("KCACHE_MAX_RESIDENT_BYTES");
}

TEST_F(ConfigTest, EnvironmentBeatsFileBeatsDefault) {
    std::filesystem::create_directories(dir() / "xdg" / "kcache");
    std::ofstream(dir() / "xdg" / "kcache" / "config")
        << "# settings\nmax_size = 64M\njit_timeout_ms = 5000\n";
    ::setenv("KCACHE_JIT_TIMEOUT_MS", "250", 1);
    kcache::Config c;
    std::string err;
    ASSERT_TRUE(load_config(c, err)) << err;
    EXPECT_EQ(c.max_bytes, 64ull << 20);
    EXPECT_EQ(c.origins["max_size"].second, Source::config_file);
    EXPECT_EQ(c.jit_timeout.count(), 250);
    EXPECT_EQ(c.origins["jit_timeout_ms"].second, Source::environment);
}

TEST_F(ConfigTest, MalformedValuesNameTheVariable) {
    const std::pair<const char*, const char*> bad[] = {
        {"KCACHE_MAX_SIZE", "lots"},
        {"KCACHE_MAX_SIZE", "0"},
        {"KCACHE_MAX_SIZE", "99999999999G"},
        {"KCACHE_JIT_TIMEOUT_MS", "-5"},
        {"KCACHE_JIT_TIMEOUT_MS", "2K"},
        {"KCACHE_DISABLE", "maybe"},
        {"KCACHE_READONLY", "2"},
        {"KCACHE_DIR", ""},
        {"KCACHE_MAX_PROGRAMS", "many"},
        {"KCACHE_MAX_PROGRAMS", "1K"},
        {"KCACHE_MAX_PROGRAMS", "2000000"},
        {"KCACHE_MAX_RESIDENT_BYTES", "-1"},
        {"KCACHE_MAX_RESIDENT_BYTES", "64Q"},
    };
    for (const auto& [var, value] : bad) {
        ::setenv(var, value, 1);
        kcache::Config c;
        std::string err;
        EXPECT_FALSE(load_config(c, err)) << var << "=" << value;
        EXPECT_NE(err.find(var), std::string::npos) << err;
        ::unsetenv(var);
    }
}

TEST_F(ConfigTest, MalformedFileLineIsReported) {
    std::filesystem::create_directories(dir() / "xdg" / "kcache");
    std::ofstream(dir() / "xdg" / "kcache" / "config") << "max_size = 1G\ncolour = blue\n";
    kcache::Config c;
    std::string err;
    EXPECT_FALSE(load_config(c, err));
    EXPECT_NE(err.find("config:2:"), std::string::npos) << err;
    ::setenv("KCACHE_CONFIG", (dir() / "missing").c_str(), 1);
    EXPECT_FALSE(load_config(c, err));
    EXPECT_NE(err.find("KCACHE_CONFIG"), std::string::npos) << err;
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
