// CLI tests of hostile input that need no OpenCL device: values that
// overflow, paths the file system refuses, unbounded or binary input, write
// errors on stdout, and configuration that names missing files.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <map>

#include "cli_runner.hpp"
#include "cli_store_fixture.hpp"
#include "kcache/compiler/jit.hpp"
#include "kcache/store/store.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

class CliHardening : public CliStoreTest {
  protected:
    std::size_t entries() { return kcache({"ls", "--json"}).json().size(); }
    // A path whose last component is longer than any file system allows (255 bytes).
    std::string overlong() const { return (dir() / std::string(300, 'B')).string(); }
};

// Every value that used to wrap around to "remove everything" is refused.
TEST_F(CliHardening, GcRefusesOverflowingValuesAndKeepsEveryEntry) {
    fill(3);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"gc", "--older-than", "9999999999999999999d"},
          {"gc", "--older-than", "213503982334601d"},
          {"gc", "--older-than", "99999999999999999999999"},
          {"gc", "--max-size", "16777216T"},
          {"gc", "--max-size", "17179869184G"},
          {"gc", "--max-size", "18446744073709551616"}}) {
        const CliRun r = kcache(args);
        EXPECT_EQ(r.code, 2) << args[2] << ": " << r.out << r.err;
        EXPECT_NE(r.err.find("out of range"), std::string::npos) << r.err;
    }
    EXPECT_EQ(entries(), 3u);
    EXPECT_EQ(kcache({"gc", "--older-than", "36500d", "--json"}).json()["removed"], 0);
}

TEST_F(CliHardening, DurationsBeyondTheirRangeAreUsageErrors) {
    const CliRun devices = kcache({"devices", "--timeout", "9999999999999999999d"});
    EXPECT_EQ(devices.code, 2) << devices.out << devices.err;
    EXPECT_EQ(devices.out.find("-2741669630025554944"), std::string::npos) << devices.out;
    EXPECT_EQ(kcache({"warm", "--timeout", "200000d"}).code, 2);
    EXPECT_EQ(kcache({"warm", "--jobs", "100000"}).code, 2);
    EXPECT_EQ(kcache({"warm", "--jobs", "99999999999999999999999"}).code, 2);
}

TEST_F(CliHardening, OverlongPathComponentsGetAnExitCodeAndAMessage) {
    const std::string bad = overlong();
    fill(1);
    const std::vector<std::pair<std::vector<std::string>, int>> cases = {
        {{"ls", "--pack", bad}, 3},
        {{"verify", "--pack", bad}, 3},
        {{"import", bad}, 3},
        {{"export", bad}, 2},
        {{"prebuild", "--output", bad}, 2}};
    for (const auto& [args, code] : cases) {
        const CliRun r = kcache(args);
        EXPECT_EQ(r.code, code) << args[0] << ": " << r.err;
        EXPECT_NE(r.err.find("too long"), std::string::npos) << args[0] << ": " << r.err;
    }
}

TEST_F(CliHardening, APackThatIsADirectoryIsRefused) {
    std::filesystem::create_directories(dir() / "d.kcpack");
    const CliRun r = kcache({"import", (dir() / "d.kcpack").string()});
    EXPECT_EQ(r.code, 4) << r.err;
    EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
}

// The output is checked before anything is built: a missing directory is
// reported at once, before ocloc is even looked for (here: does not exist).
TEST_F(CliHardening, PrebuildChecksItsOutputBeforeBuilding) {
    const CliRun missing = kcache({"prebuild", "--output", (dir() / "no" / "p.kcpack").string(),
                                   "--ocloc", "/nonexistent/ocloc"});
    EXPECT_EQ(missing.code, 3) << missing.err;
    EXPECT_NE(missing.err.find("no such directory"), std::string::npos) << missing.err;
    const CliRun jobs = kcache({"prebuild", "--output", (dir() / "p.kcpack").string(), "--jobs",
                                "100000", "--ocloc", "/nonexistent/ocloc"});
    EXPECT_EQ(jobs.code, 2) << jobs.err;
    EXPECT_NE(jobs.err.find("--jobs: must be between 1 and 256"), std::string::npos) << jobs.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "p.kcpack"));
}

TEST_F(CliHardening, ConfigFromDevicesFifosAndHugeFilesIsRefused) {
    ASSERT_EQ(::mkfifo((dir() / "fifo").c_str(), 0600), 0);
    {
        std::ofstream big(dir() / "big");
        big << "# " << std::string(2 << 20, 'x') << "\n";
    }
    for (const auto& [path, why] : std::vector<std::pair<std::string, std::string>>{
             {"/dev/zero", "not a regular file"},
             {(dir() / "fifo").string(), "not a regular file"},
             {dir().string(), "a directory"},
             {(dir() / "big").string(), "larger than the limit"}}) {
        const CliRun r = kcache({"stats"}, {"KCACHE_CONFIG=" + path});
        EXPECT_EQ(r.code, 2) << path << ": " << r.err;
        EXPECT_NE(r.err.find(why), std::string::npos) << path << ": " << r.err;
        EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
    }
}

TEST_F(CliHardening, BinaryBytesFromTheConfigAreEscaped) {
    std::ofstream(dir() / "config") << "\x1b]0;pwned\x07\xff = 1\n";
    const CliRun r = kcache({"stats"}, {"KCACHE_CONFIG=" + (dir() / "config").string()});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\x07'), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\xff'), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("\\x1b]0;pwned\\x07\\xff"), std::string::npos) << r.err;
    const CliRun env = kcache({"stats"}, {"KCACHE_MAX_SIZE=\x1b[2J"});
    EXPECT_EQ(env.code, 2);
    EXPECT_EQ(env.err.find('\x1b'), std::string::npos) << env.err;
}

TEST_F(CliHardening, WriteErrorsOnStdoutAreFailures) {
    fill(2);
    const CliRun r = kcache_to("/dev/full", {"ls", "--json"});
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("cannot write the output"), std::string::npos) << r.err;
    EXPECT_EQ(kcache_to(dir() / "out.json", {"ls", "--json"}).code, 0);
}

TEST_F(CliHardening, LsOfAnUnknownKernelIsNotFound) {
    fill(2);
    const CliRun r = kcache({"ls", "--kernel", "nosuch"});
    EXPECT_EQ(r.code, 3) << r.out << r.err;
    EXPECT_NE(r.err.find("nosuch"), std::string::npos);
    EXPECT_EQ(kcache({"ls", "--kernel", "conv2d"}).code, 0);  // known, no entries: empty
}

TEST_F(CliHardening, DeviceDbOverrideThatCannotBeUsedNamesTheFile) {
    const CliRun missing = kcache({"prebuild", "--output", (dir() / "p.kcpack").string()},
                                  {"KCACHE_DEVICE_DB=garbage"});
    EXPECT_EQ(missing.code, 3) << missing.err;
    EXPECT_NE(missing.err.find("KCACHE_DEVICE_DB"), std::string::npos) << missing.err;
    EXPECT_NE(missing.err.find("garbage"), std::string::npos) << missing.err;
    std::ofstream(dir() / "db.json") << "{ not json";
    const CliRun malformed = kcache({"prebuild", "--output", (dir() / "p.kcpack").string()},
                                    {"KCACHE_DEVICE_DB=" + (dir() / "db.json").string()});
    EXPECT_EQ(malformed.code, 2) << malformed.err;
    EXPECT_NE(malformed.err.find("db.json"), std::string::npos) << malformed.err;
}

TEST_F(CliHardening, DoctorNamesMissingPackEntries) {
    const CliRun r = kcache({"doctor", "--json", "--timeout", "1ms"},
                            {"KCACHE_PACKS=" + (dir() / "gone.kcpack").string()});
    bool named = false;
    for (const auto& f : r.json()) {
        named = named || (f["name"] == "packs" && f["level"] == "problem" &&
                          f["value"].get<std::string>().find("gone.kcpack") != std::string::npos);
    }
    EXPECT_TRUE(named) << r.out;
    EXPECT_EQ(r.code, 1);
}

// The settings the lower layers get only through Config are in doctor's
// report with their origins: the device-data override, the scratch directory,
// the helper path and the canary's policy.
TEST_F(CliHardening, DoctorShowsTheSettingsTheLowerLayersGetThroughConfig) {
    std::filesystem::create_directories(dir() / "xdg-config" / "kcache");
    std::ofstream(dir() / "xdg-config" / "kcache" / "config")
        << "tmpdir = " << (dir() / "scratch").string() << "\n";
    std::ofstream(dir() / "site.json") << R"({"schema": 1})";
    const CliRun r =
        kcache({"doctor", "--json", "--timeout", "1ms"},
               {"XDG_CONFIG_HOME=" + (dir() / "xdg-config").string(),
                "KCACHE_DEVICE_DB=" + (dir() / "site.json").string(),
                "KCACHE_JIT_PATH=" + (dir() / "my-kcache-jit").string(), "KCACHE_CANARY=enforce"});
    std::map<std::string, std::string> config;
    for (const auto& f : r.json()) {
        if (f["section"] == "config") {
            config[f["name"].get<std::string>()] = f["value"].get<std::string>();
        } else {
            EXPECT_NE(f["name"], "device_db") << "the override file does not load: " << f["value"];
        }
    }
    EXPECT_EQ(config["device_db"], (dir() / "site.json").string() + "  [environment]");
    EXPECT_EQ(config["tmpdir"], (dir() / "scratch").string() + "  [config file]");
    EXPECT_EQ(config["jit_path"], (dir() / "my-kcache-jit").string() + "  [environment]");
    EXPECT_EQ(config["canary"].rfind("enforce (", 0), 0u) << config["canary"];
}

// prebuild makes ocloc's scratch directories under Config::tmpdir: the
// config file's `tmpdir`, or TMPDIR, which comes first; and it reads the
// device-data override the config file names.
TEST_F(CliHardening, PrebuildTakesItsScratchDirectoryAndDeviceDataFromTheConfig) {
    const auto config_dir = dir() / "xdg-config" / "kcache";
    std::filesystem::create_directories(config_dir);
    std::filesystem::create_directories(dir() / "from-file");
    std::filesystem::create_directories(dir() / "from-env");
    std::ofstream(config_dir / "config") << "tmpdir = " << (dir() / "from-file").string() << "\n";
    const auto pack = (dir() / "p.kcpack").string();
    const std::vector<std::string> env = {"XDG_CONFIG_HOME=" + (dir() / "xdg-config").string(),
                                          "FAKE_OCLOC_CWD_FILE=" + (dir() / "cwd").string()};
    auto prebuild_with = [&](const std::vector<std::string>& extra_env) {
        std::vector<std::string> all = env;
        all.insert(all.end(), extra_env.begin(), extra_env.end());
        const CliRun r =
            kcache({"prebuild", "--output", pack, "--ocloc", KCACHE_TEST_FAKE_OCLOC}, all);
        EXPECT_EQ(r.code, 5) << r.err;  // the stand-in has no version to report
    };
    // The children inherit this process's environment: no TMPDIR while they run.
    const char* own = std::getenv("TMPDIR");
    const std::string saved = own ? own : "";
    ::unsetenv("TMPDIR");
    prebuild_with({});
    prebuild_with({"TMPDIR=" + (dir() / "from-env").string()});
    own ? ::setenv("TMPDIR", saved.c_str(), 1) : ::unsetenv("TMPDIR");
    std::ifstream cwd(dir() / "cwd");
    std::string from_file;
    std::string from_env;
    ASSERT_TRUE(std::getline(cwd, from_file) && std::getline(cwd, from_env))
        << "the stand-in ocloc did not run twice";
    EXPECT_EQ(from_file.rfind((dir() / "from-file" / "kcache-ocloc-").string(), 0), 0u)
        << from_file;
    EXPECT_EQ(from_env.rfind((dir() / "from-env" / "kcache-ocloc-").string(), 0), 0u) << from_env;

    std::ofstream(config_dir / "config", std::ios::app)
        << "device_db = " << (dir() / "gone.json").string() << "\n";
    const CliRun missing = kcache({"prebuild", "--output", pack}, env);
    EXPECT_EQ(missing.code, 3) << missing.err;
    EXPECT_NE(missing.err.find("gone.json"), std::string::npos) << missing.err;
    EXPECT_NE(missing.err.find("device_db in the config file"), std::string::npos) << missing.err;
}

// Disabled means: applications get `disabled` and fall back; the CLI still
// inspects and cleans the store, and warm refuses to build what nothing reads.
TEST_F(CliHardening, DisabledCacheWarmsNothingButStoreCommandsWork) {
    fill(1);
    const CliRun warm = kcache({"warm"}, {"KCACHE_DISABLE=1"});
    EXPECT_EQ(warm.code, 2) << warm.err;
    EXPECT_NE(warm.err.find("disabled"), std::string::npos) << warm.err;
    const CliRun fresh =
        kcache({"warm"}, {"KCACHE_DISABLE=1", "KCACHE_DIR=" + (dir() / "f").string()});
    EXPECT_EQ(fresh.code, 2) << fresh.err;
    EXPECT_FALSE(std::filesystem::exists(dir() / "f"));
    EXPECT_EQ(kcache({"ls", "--json"}, {"KCACHE_DISABLE=1"}).json().size(), 1u);
}

TEST_F(CliHardening, FailureRecordsAreListedAndCleared) {
    fill(1);
    {
        auto store = ks::Store::open(store_dir());
        ASSERT_TRUE(store.ok());
        ASSERT_TRUE(store
                        ->record_failure(ks::make_key(sample_fields(7)), ks::FailureKind::timeout,
                                         "JIT timeout: compile passed its deadline", 2000)
                        .ok());
        ASSERT_TRUE(store
                        ->record_failure(ks::make_key(sample_fields(8)),
                                         ks::FailureKind::build_error,
                                         "JIT build_error: CL_BUILD_PROGRAM_FAILURE\nerror: x")
                        .ok());
    }
    const CliRun listed = kcache({"ls", "--failures", "--json"});
    ASSERT_EQ(listed.code, 0) << listed.err;
    ASSERT_EQ(listed.json().size(), 2u) << listed.out;
    bool timeout_with_budget = false;
    for (const auto& f : listed.json()) {
        timeout_with_budget =
            timeout_with_budget || (f["kind"] == "timeout" && f["budget_ms"] == 2000);
    }
    EXPECT_TRUE(timeout_with_budget) << listed.out;
    const CliRun text = kcache({"ls", "--failures"});
    EXPECT_NE(text.out.find("budget 2000 ms"), std::string::npos) << text.out;
    EXPECT_EQ(kcache({"gc", "--failures", "--older-than", "1d"}).code, 2);
    const CliRun cleared = kcache({"gc", "--failures", "--json"});
    ASSERT_EQ(cleared.code, 0) << cleared.err;
    EXPECT_EQ(cleared.json()["failures_cleared"], 2);
    EXPECT_EQ(kcache({"ls", "--failures", "--json"}).json().size(), 0u);
    EXPECT_EQ(entries(), 1u);  // entries are not failure records
}

// This test binary is not installed and has no kcache-jit beside it: the
// helper built in the same build tree is found without configuration. The
// compiler layer reads no environment: KCACHE_JIT_PATH reaches it only
// through Config::jit_helper.
TEST(BuildTree, FindsTheJitHelperWithoutConfiguration) {
    ::setenv("KCACHE_JIT_PATH", "/nonexistent/kcache-jit", 1);
    const std::filesystem::path helper = compiler::default_helper_path();
    ::unsetenv("KCACHE_JIT_PATH");
    EXPECT_EQ(helper.filename(), "kcache-jit");
    EXPECT_EQ(::access(helper.c_str(), X_OK), 0) << helper << " is not an executable";
}

}  // namespace
}  // namespace kcache::test
