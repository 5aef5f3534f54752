// The table of settings (kcache_settings.def): every row parses its own
// text back to the same value; unknown KCACHE_* variables and config-file
// keys are named with the closest known name, the library warns once per
// unknown variable and process, and every KCACHE_* variable the product,
// its tests, benches and layer read is known (no false warning).

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <mutex>
#include <regex>
#include <set>

#include "kcache/common/log.hpp"
#include "kcache/config/setting_table.hpp"
#include "kcache/service/service_api.hpp"
#include "temp_dir.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;
using service::find_setting;
using service::setting_rows;
using service::unknown_variables;

// The warnings logged while it lives.
class Warnings {
  public:
    Warnings() {
        logging::set_sink([this](logging::Level, std::string_view m) {
            std::lock_guard g(mu_);
            lines_.emplace_back(m);
        });
    }
    ~Warnings() { logging::set_sink({}); }
    // How many logged lines contain `text`.
    int count(const std::string& text) {
        std::lock_guard g(mu_);
        int n = 0;
        for (const auto& l : lines_) {
            n += l.find(text) != std::string::npos ? 1 : 0;
        }
        return n;
    }

  private:
    std::mutex mu_;
    std::vector<std::string> lines_;
};

// "KCACHE_" + `rest`: the unknown names of these tests are written so that
// the scan of the tree below does not take them for names the tree reads.
std::string typo(const std::string& rest) {
    return "KCACHE_" + rest;
}

std::vector<service::UnknownVariable> unknown_of(std::vector<std::string> env) {
    std::vector<char*> ptrs;
    for (auto& e : env) {
        ptrs.push_back(e.data());
    }
    ptrs.push_back(nullptr);
    return unknown_variables(ptrs.data());
}

TEST(SettingTable, EveryRowReadsItsOwnTextBackToTheSameValue) {
    Config defaults;
    ASSERT_GE(setting_rows().size(), 40u);
    for (const service::SettingRow& r : setting_rows()) {
        SCOPED_TRACE(r.key);
        EXPECT_EQ(find_setting(r.key), &r);
        if (r.apply == nullptr) {
            continue;  // no field: the text is kept as given
        }
        const std::string text = r.text(r, defaults);
        if (text.empty()) {
            continue;  // unset until load_config resolves it (the store's dir)
        }
        Config c;
        EXPECT_EQ(r.apply(r, c, text), "") << text;
        EXPECT_EQ(r.text(r, c), text);
        EXPECT_NE(std::string(r.doc), "");
    }
}

TEST(SettingTable, BoundsAndChecksOfTheRowsHold) {
    Config c;
    const auto apply = [&](const char* key, const std::string& v) {
        const service::SettingRow* r = find_setting(key);
        return r->apply(*r, c, v);
    };
    EXPECT_EQ(apply("jit_helpers", "256"), "");
    EXPECT_EQ(apply("jit_helpers", "257"), "expected a count between 0 and 256");
    EXPECT_EQ(apply("jit_timeout_ms", "90s"), "");
    EXPECT_EQ(c.jit_timeout, std::chrono::seconds(90));
    EXPECT_NE(apply("jit_timeout_ms", "0"), "");
    EXPECT_NE(apply("metrics_interval_ms", "99"), "");
    EXPECT_NE(apply("trace_max_size", "4095"), "");
    EXPECT_NE(apply("max_size", "0"), "");
    EXPECT_NE(apply("dir", ""), "");
    EXPECT_EQ(apply("tmpdir", ""), "");
    EXPECT_EQ(c.tmpdir, "/tmp");
    EXPECT_NE(apply("remote_s3_region", "US East"), "");
    EXPECT_NE(apply("remote", "ftp://x"), "");
    EXPECT_EQ(apply("canary", "enforce"), "");
    EXPECT_EQ(c.canary, CanaryPolicy::enforce);
    EXPECT_EQ(apply("remote_ttl", "7d"), "");
    EXPECT_EQ(find_setting("remote_ttl")->text(*find_setting("remote_ttl"), c), "604800000ms");
}

TEST(UnknownSettings, ATypoIsNamedWithTheClosestKnownName) {
    const auto unknown =
        unknown_of({typo("JIT_TIMEOUT=2s"), "KCACHE_JIT_TIMEOUT_MS=2000",
                    "KCACHE_TEST_PLATFORM=Portable", "KCACHE_LOG_LEVEL=info",
                    "KCACHE_FAULT_DRIVER=9", "HOME=/root", typo("REMOTE_S3_REGON=x")});
    ASSERT_EQ(unknown.size(), 2u);
    EXPECT_EQ(unknown[0].name, "KCACHE_JIT_TIMEOUT");
    EXPECT_EQ(unknown[0].value, "2s");
    EXPECT_EQ(unknown[0].suggestion, "KCACHE_JIT_TIMEOUT_MS");
    EXPECT_EQ(unknown[1].name, "KCACHE_REMOTE_S3_REGON");
    EXPECT_EQ(unknown[1].suggestion, "KCACHE_REMOTE_S3_REGION");
}

class UnknownSettingsLog : public TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        ::setenv("XDG_CONFIG_HOME", (dir() / "xdg").c_str(), 1);
        ::setenv("KCACHE_DIR", (dir() / "store").c_str(), 1);
    }
    void TearDown() override {
        ::unsetenv("KCACHE_DIR");
        TempDirTest::TearDown();
    }
};

TEST_F(UnknownSettingsLog, TheLibraryWarnsOncePerUnknownVariable) {
    ::setenv(typo("MAX_SIZ").c_str(), "2G", 1);
    Warnings log;
    Config c;
    std::string error;
    ASSERT_TRUE(core::load_config(c, error)) << error;
    ASSERT_TRUE(core::load_config(c, error)) << error;
    ::unsetenv(typo("MAX_SIZ").c_str());
    EXPECT_EQ(
        log.count(typo("MAX_SIZ") + "=\"2G\": unknown, ignored; did you mean KCACHE_MAX_SIZE?"), 1);
}

TEST_F(UnknownSettingsLog, AKnownVariableProducesNothing) {
    ::setenv("KCACHE_JIT_TIMEOUT_MS", "2000", 1);
    Warnings log;
    Config c;
    std::string error;
    ASSERT_TRUE(core::load_config(c, error)) << error;
    ::unsetenv("KCACHE_JIT_TIMEOUT_MS");
    EXPECT_EQ(c.jit_timeout, std::chrono::milliseconds(2000));
    EXPECT_EQ(log.count("KCACHE_JIT_TIMEOUT_MS"), 0);
    EXPECT_EQ(log.count("unknown"), 0);
}

TEST_F(UnknownSettingsLog, AnUnknownConfigFileKeyIsNamedWithTheClosestKey) {
    fs::create_directories(dir() / "xdg" / "kcache");
    std::ofstream(dir() / "xdg" / "kcache" / "config") << "jit_timeout = 2s\n";
    Config c;
    std::string error;
    EXPECT_FALSE(core::load_config(c, error));
    EXPECT_NE(error.find("config:1: jit_timeout: unknown setting; did you mean jit_timeout_ms?"),
              std::string::npos)
        << error;
}

// The KCACHE_* names read from the environment in the tree's sources: by
// getenv or os.environ, set by setenv, or given as "NAME=value" to a child.
std::set<std::string> variables_read_in(const fs::path& root) {
    const std::regex read(
        R"re((?:getenv|environ\.get|environ\[|setenv)\(?\s*"(KCACHE_[A-Z0-9_]*[A-Z0-9])")re");
    const std::regex given(R"re("(KCACHE_[A-Z0-9_]*[A-Z0-9])=)re");
    std::set<std::string> names;
    for (const char* top : {"api", "service", "canary", "config", "observe", "store", "remote",
                            "sign", "common", "compiler", "kernels_cl", "layer", "tools", "tests",
                            "bench", "python", "examples", "device_db"}) {
        for (const auto& e : fs::recursive_directory_iterator(root / top)) {
            const std::string ext = e.path().extension().string();
            if (!e.is_regular_file() ||
                (ext != ".cpp" && ext != ".hpp" && ext != ".c" && ext != ".py" && ext != ".sh")) {
                continue;
            }
            std::ifstream in(e.path());
            const std::string text((std::istreambuf_iterator<char>(in)), {});
            for (const std::regex* r : {&read, &given}) {
                for (std::sregex_iterator m(text.begin(), text.end(), *r), end; m != end; ++m) {
                    names.insert((*m)[1].str());
                }
            }
        }
    }
    return names;
}

TEST(UnknownSettings, EveryVariableTheTreeReadsIsKnown) {
    const auto names = variables_read_in(KCACHE_SOURCE_DIR);
    ASSERT_TRUE(names.contains("KCACHE_TEST_PLATFORM")) << "the scan found nothing";
    ASSERT_TRUE(names.contains("KCACHE_JIT_TIMEOUT_MS"));
    std::vector<std::string> env;
    for (const std::string& n : names) {
        env.push_back(n + "=1");
    }
    for (const auto& u : unknown_of(env)) {
        ADD_FAILURE() << u.name << " is read by the tree but unknown to kcache";
    }
}

}  // namespace
}  // namespace kcache::test
