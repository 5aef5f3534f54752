// The C API's configuration object through the shared library: every
// setting by its config-file key, read back as text that sets it unchanged,
// with where each value came from; NULL and bad input refused, nothing lost.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <string>

#include "kcache/kcache.h"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

class CApiConfig : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        for (const char* v : {"KCACHE_CONFIG", "KCACHE_MAX_HOT_BYTES", "KCACHE_MAX_PROGRAMS"}) {
            ::unsetenv(v);
        }
        ::setenv("KCACHE_DIR", (dir() / "store").c_str(), 1);
    }
    void TearDown() override {
        kcache_config_free(config_);
        ::unsetenv("KCACHE_CONFIG");
        ::unsetenv("KCACHE_MAX_HOT_BYTES");
        TempDirTest::TearDown();
    }

    // The effective value of `key` ("<error>" when the call fails).
    std::string get(const char* key) const {
        char* v = nullptr;
        if (kcache_config_get(config_, key, &v) != KCACHE_STATUS_OK) {
            return "<error>";
        }
        std::string out = v;
        kcache_free(v);
        return out;
    }

    kcache_source origin(const char* key, std::string* written = nullptr) const {
        kcache_source s = KCACHE_SOURCE_API;
        char* w = nullptr;
        EXPECT_EQ(kcache_config_origin(config_, key, &s, &w), KCACHE_STATUS_OK);
        if (written != nullptr) {
            *written = w;
        }
        kcache_free(w);
        return s;
    }

    kcache_config* config_ = nullptr;
};

TEST_F(CApiConfig, NullArgumentsAreRefusedAndOutputsCleared) {
    kcache_config* c = reinterpret_cast<kcache_config*>(this);  // garbage the calls must clear
    EXPECT_EQ(kcache_config_load(nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_config_new(nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_config_copy(nullptr, &c), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(c, nullptr);
    ASSERT_EQ(kcache_config_new(&config_), KCACHE_STATUS_OK);
    EXPECT_EQ(kcache_config_copy(config_, nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_config_set(nullptr, "dir", "/x"), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_config_set(config_, nullptr, "/x"), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_config_set(config_, "dir", nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    char* v = reinterpret_cast<char*>(this);
    EXPECT_EQ(kcache_config_get(nullptr, "dir", &v), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(v, nullptr);
    EXPECT_EQ(kcache_config_get(config_, "dir", nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_config_get(config_, nullptr, &v), KCACHE_STATUS_INVALID_ARGUMENT);
    kcache_source s;
    EXPECT_EQ(kcache_config_origin(nullptr, "dir", &s, nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_config_origin(config_, "dir", nullptr, nullptr),
              KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_config_origin(config_, "dir", &s, nullptr), KCACHE_STATUS_OK);
    EXPECT_EQ(kcache_config_key(100000), nullptr);
    kcache_config_free(nullptr);
    kcache_cache* cache = nullptr;
    EXPECT_EQ(kcache_cache_config(nullptr, &c), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_open_config(nullptr, &cache, nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(kcache_open_config(config_, nullptr, nullptr), KCACHE_STATUS_INVALID_ARGUMENT);
}

// Every key, default or loaded: its text sets the same value back, and the
// set is recorded as the API's.
TEST_F(CApiConfig, EverySettingReadsBackAsTextThatSetsItUnchanged) {
    ASSERT_EQ(kcache_config_load(&config_), KCACHE_STATUS_OK) << kcache_last_error();
    std::size_t n = 0;
    for (; const char* key = kcache_config_key(n); ++n) {
        const std::string before = get(key);
        ASSERT_NE(before, "<error>") << key;
        ASSERT_EQ(kcache_config_set(config_, key, before.c_str()), KCACHE_STATUS_OK)
            << key << " = " << before << ": " << kcache_last_error();
        EXPECT_EQ(get(key), before) << key;
        std::string written;
        EXPECT_EQ(origin(key, &written), KCACHE_SOURCE_API) << key;
        EXPECT_EQ(written, before) << key;
    }
    EXPECT_GE(n, 40u);
    EXPECT_EQ(get("dir"), (dir() / "store").string());
    EXPECT_EQ(get("max_size"), "1073741824");
    EXPECT_EQ(get("jit_timeout_ms"), "120000");
}

TEST_F(CApiConfig, ValuesAreParsedAsTheConfigFileParsesThem) {
    ASSERT_EQ(kcache_config_new(&config_), KCACHE_STATUS_OK);
    EXPECT_EQ(get("dir"), "");
    const std::pair<const char*, const char*> cases[][2] = {
        {{"max_size", "2G"}, {"max_size", "2147483648"}},
        {{"jit_timeout_ms", "90s"}, {"jit_timeout_ms", "90000"}},
        {{"remote_ttl", "12h"}, {"remote_ttl", "43200000ms"}},
        {{"disable", "yes"}, {"disable", "1"}},
        {{"packs", "/a.kpack:/b"}, {"packs", "/a.kpack:/b"}},
        {{"remote", " http://a:1  https://b "}, {"remote", "http://a:1 https://b"}},
        {{"canary", "enforce"}, {"canary", "enforce"}},
        {{"trusted_key_dirs", "/k1::/k2"}, {"trusted_key_dirs", "/k1:/k2"}},
    };
    for (const auto& [in, out] : cases) {
        ASSERT_EQ(kcache_config_set(config_, in.first, in.second), KCACHE_STATUS_OK)
            << in.first << ": " << kcache_last_error();
        const std::string text = get(out.first);
        EXPECT_EQ(text, out.second) << in.first;
        ASSERT_EQ(kcache_config_set(config_, in.first, text.c_str()), KCACHE_STATUS_OK);
        EXPECT_EQ(get(out.first), text);
    }
}

TEST_F(CApiConfig, ABadKeyOrValueIsAConfigErrorAndChangesNothing) {
    ASSERT_EQ(kcache_config_new(&config_), KCACHE_STATUS_OK);
    ASSERT_EQ(kcache_config_set(config_, "max_size", "3M"), KCACHE_STATUS_OK);
    EXPECT_EQ(kcache_config_set(config_, "max_size", "lots"), KCACHE_STATUS_CONFIG_ERROR);
    EXPECT_NE(std::string(kcache_last_error()).find("max_size"), std::string::npos)
        << kcache_last_error();
    EXPECT_EQ(get("max_size"), "3145728");
    EXPECT_EQ(kcache_config_set(config_, "remote", "ftp://x"), KCACHE_STATUS_CONFIG_ERROR);
    EXPECT_EQ(get("remote"), "");
    EXPECT_EQ(kcache_config_set(config_, "no_such_key", "1"), KCACHE_STATUS_CONFIG_ERROR);
    EXPECT_NE(std::string(kcache_last_error()).find("unknown setting"), std::string::npos);
    char* v = nullptr;
    EXPECT_EQ(kcache_config_get(config_, "no_such_key", &v), KCACHE_STATUS_CONFIG_ERROR);
    EXPECT_EQ(v, nullptr);
}

TEST_F(CApiConfig, OriginsSayWhereEachValueCameFrom) {
    const auto file = dir() / "config";
    std::ofstream(file) << "max_programs = 7\nmax_hot_bytes = 5\n";
    ::setenv("KCACHE_CONFIG", file.c_str(), 1);
    ::setenv("KCACHE_MAX_HOT_BYTES", "1M", 1);
    ASSERT_EQ(kcache_config_load(&config_), KCACHE_STATUS_OK) << kcache_last_error();
    std::string written;
    EXPECT_EQ(origin("max_programs", &written), KCACHE_SOURCE_CONFIG_FILE);
    EXPECT_EQ(written, "7");
    EXPECT_EQ(origin("max_hot_bytes", &written), KCACHE_SOURCE_ENVIRONMENT);
    EXPECT_EQ(written, "1M");
    EXPECT_EQ(get("max_hot_bytes"), "1048576");
    EXPECT_EQ(origin("max_size", &written), KCACHE_SOURCE_DEFAULT);
    EXPECT_EQ(written, "");
    kcache_config* copy = nullptr;
    ASSERT_EQ(kcache_config_copy(config_, &copy), KCACHE_STATUS_OK);
    ASSERT_EQ(kcache_config_set(copy, "max_programs", "9"), KCACHE_STATUS_OK);
    EXPECT_EQ(get("max_programs"), "7");  // the copy is its own
    kcache_config_free(copy);

    std::ofstream(file) << "max_programs = 7\nmax_programs\n";
    kcache_config* bad = reinterpret_cast<kcache_config*>(this);
    EXPECT_EQ(kcache_config_load(&bad), KCACHE_STATUS_CONFIG_ERROR);
    EXPECT_EQ(bad, nullptr);
    EXPECT_NE(std::string(kcache_last_error()).find(":2:"), std::string::npos)
        << kcache_last_error();
}

}  // namespace
}  // namespace kcache::test
