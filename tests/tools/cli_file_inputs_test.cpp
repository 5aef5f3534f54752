// Every file a command line names (traces, manifests, packs, keys, errata,
// the config file, the device database, the remote tier's CA, token and
// signing key) replaced by a FIFO without a writer
// or by /dev/zero: each command refuses it at once with an error that names
// the file and says why, exits non-zero, and neither waits nor fills memory.
// A short deadline turns a regression (a hang, an endless read) into a
// failure.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "sign/cli_sign_fixture.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;

// One input: the command with "@" where the file goes, or an environment
// variable that names it ("NAME=@") with the command to run.
struct Input {
    std::vector<std::string> args;
    std::string env;
    std::vector<std::string> more_env = {};  // what else the command needs set
};

class CliFileInputs : public CliSign {
  protected:
    void SetUp() override {
        CliSign::SetUp();
        cli_deadline_ = std::chrono::seconds(30);
        ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
        std::ofstream(dir() / "trace.json") << "[\n";
        ASSERT_EQ(kcache({"keygen", "--output", path("k")}).code, 0);
        pack_ = make_pack("good");
    }
    // `input` with "@" replaced by `file`, and the other files it needs.
    CliRun run(const Input& input, const std::string& file) {
        std::vector<std::string> args;
        for (const std::string& a : input.args) {
            args.push_back(a == "@"       ? file
                           : a == "PACK"  ? pack_.string()
                           : a == "KEY"   ? path("k.key")
                           : a == "TRACE" ? path("trace.json")
                           : a == "OUT"   ? path("out-" + std::to_string(++outputs_))
                                          : a);
        }
        std::vector<std::string> env{"XDG_CONFIG_HOME=" + path("config")};
        if (!input.env.empty()) {
            env.push_back(input.env.substr(0, input.env.size() - 1) + file);
        }
        env.insert(env.end(), input.more_env.begin(), input.more_env.end());
        return kcache(args, env);
    }
    fs::path pack_;
    int outputs_ = 0;
};

const std::vector<Input> kInputs = {
    {{"capture", "--from-trace", "@", "--output", "OUT"}, ""},
    {{"capture", "--from-trace", "TRACE", "@", "--output", "OUT"}, ""},
    {{"export", "OUT", "--manifest", "@"}, ""},
    {{"export", "OUT", "--sign", "@"}, ""},
    {{"import", "@"}, ""},
    {{"verify", "--pack", "@"}, ""},
    {{"ls", "--pack", "@"}, ""},
    {{"sign", "@", "--key", "KEY"}, ""},
    {{"sign", "PACK", "--key", "@"}, ""},
    {{"errata", "import", "@"}, ""},
    {{"errata", "export", "OUT", "--key", "@"}, ""},
    {{"errata", "export", "--pack", "@", "--key", "KEY"}, ""},
    {{"stats"}, "KCACHE_CONFIG=@"},
    {{"doctor"}, "KCACHE_DEVICE_DB=@"},
    {{"warm", "--manifest", "@"}, ""},
    {{"devices", "--pack", "@"}, ""},
    {{"prebuild", "--output", "OUT", "--sign", "@"}, ""},
    // Files of the remote tier, read when the client opens (a port with no server).
    {{"pull"}, "KCACHE_REMOTE_CA=@", {"KCACHE_REMOTE=https://127.0.0.1:9/kcache"}},
    {{"pull"}, "KCACHE_REMOTE_TOKEN_FILE=@", {"KCACHE_REMOTE=https://127.0.0.1:9/kcache"}},
    {{"pull"}, "KCACHE_REMOTE_SIGNING_KEY=@", {"KCACHE_REMOTE=http://127.0.0.1:9/kcache"}},
};

// The kinds of file that must be refused, and where each is planted.
const std::vector<std::pair<std::string, std::string>> kRefused = {{"fifo", "fifo"},
                                                                   {"zero", "/dev/zero"}};

TEST_F(CliFileInputs, EveryInputThatIsNotARegularFileIsRefusedAtOnce) {
    for (const Input& input : kInputs) {
        for (const auto& [kind, where] : kRefused) {
            const std::string file = kind == "fifo" ? path(where) : where;
            std::string shown = input.env;
            for (const std::string& a : input.args) {
                shown += " " + a;
            }
            SCOPED_TRACE(kind + ":" + shown);
            const CliRun r = run(input, file);
            EXPECT_GT(r.code, 0) << "a hang, a crash or a success: " << r.out << r.err;
            // doctor names its problems in its report (stdout), the others on stderr
            const std::string said = r.err + r.out;
            EXPECT_NE(said.find(file), std::string::npos) << said;
            EXPECT_NE(said.find("not a regular file"), std::string::npos) << said;
        }
    }
}

TEST_F(CliFileInputs, ATraceLineOverTheLimitIsCountedAndTheRestIsRead) {
    {
        std::ofstream t(dir() / "long.json");
        t << "[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,\"args\":{}}\n";
        t << "," << std::string(17u << 20, ' ') << "{}\n";  // 17 MiB: over the 16 MiB bound
        t << ",{\"name\":\"request\",\"args\":{\"status\":\"ok\",\"kernel\":\"dot\","
             "\"device\":\"d\"}}\n]\n";
    }
    const CliRun r =
        kcache({"capture", "--from-trace", path("long.json"), "--output", path("m.json")});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("1 registry variants"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("1 trace lines did not parse"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kcache::test
