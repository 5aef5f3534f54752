// Capture and replay on PoCL: a process that uses kcache (capture_workload,
// linked to libkcache.so) runs with KCACHE_TRACE on an empty store and
// compiles a registry kernel and its own kernel; `kcache capture` turns the
// trace into a manifest; `kcache warm --manifest` on another empty store
// builds both; the workload then compiles nothing there (0 JIT), and the
// pack `kcache export --manifest` writes holds exactly those binaries, so a
// third empty store with only the pack compiles nothing either. The first
// run also writes its metrics file (KCACHE_METRICS_FILE) as it exits.

#include <gtest/gtest.h>

#include "cli_runner.hpp"

namespace kcache::test {
namespace {

class CliCaptureDevice : public CliTest {
  protected:
    // The workload's metrics file (m-PID.prom in dir()), written at its exit,
    // parses in the Prometheus text format and counts its two compiles.
    void expect_metrics_file_of_two_compiles() {
        std::filesystem::path file;
        for (const auto& e : std::filesystem::directory_iterator(dir())) {
            if (e.path().filename().string().rfind("m-", 0) == 0) {
                file = e.path();
            }
        }
        ASSERT_FALSE(file.empty()) << "no metrics file";
        const CliRun parsed =
            run_cli("/bin/sh",
                    {"-c", std::string("/usr/bin/python3 ") + KCACHE_CHECK_EXPOSITION +
                               " prometheus < " + file.string()},
                    {});
        ASSERT_EQ(parsed.code, 0) << parsed.out << parsed.err;
        EXPECT_NE(parsed.out.find("kcache_requests_total{result=\"ok\",rung=\"jit\"} 2.0"),
                  std::string::npos)
            << parsed.out;
        EXPECT_NE(parsed.out.find("kcache_compile_duration_seconds_count{} 2.0"), std::string::npos)
            << parsed.out;
    }
    // Runs the workload on the store `store` with `env` added.
    CliRun workload(const std::filesystem::path& store, std::vector<std::string> env = {}) {
        env.push_back("KCACHE_DIR=" + store.string());
        env.push_back(std::string("KCACHE_JIT_PATH=") + KCACHE_TEST_JIT_PATH);
        return run_cli(KCACHE_TEST_WORKLOAD, {}, env);
    }
};

TEST_F(CliCaptureDevice, ACapturedRunReplaysWithNoJitOnAFreshStore) {
    const auto trace = dir() / "trace.json";
    const CliRun first =
        workload(dir() / "a", {"KCACHE_TRACE=" + trace.string(),
                               "KCACHE_METRICS_FILE=" + (dir() / "m-%p.prom").string()});
    ASSERT_EQ(first.code, 0) << first.out << first.err;
    EXPECT_NE(first.out.find("jit_compiles 2"), std::string::npos) << first.out;
    expect_metrics_file_of_two_compiles();

    const auto manifest = dir() / "captured" / "manifest.json";
    std::filesystem::create_directories(manifest.parent_path());
    const CliRun captured =
        kcache({"capture", "--from-trace", trace.string(), "--output", manifest.string()});
    ASSERT_EQ(captured.code, 0) << captured.err;
    EXPECT_NE(captured.out.find("1 registry variants, 1 own kernels"), std::string::npos)
        << captured.out;

    const auto fresh = dir() / "b";
    const CliRun warmed = kcache({"warm", "--manifest", manifest.string(), "--json"},
                                 {"KCACHE_DIR=" + fresh.string()});
    ASSERT_EQ(warmed.code, 0) << warmed.out << warmed.err;
    EXPECT_EQ(warmed.json()["built"], 2) << warmed.out;

    const CliRun replay = workload(fresh);
    ASSERT_EQ(replay.code, 0) << replay.out << replay.err;
    EXPECT_NE(replay.out.find("jit_compiles 0"), std::string::npos) << replay.out;
    EXPECT_EQ(replay.out.find("jit ok"), std::string::npos) << replay.out;

    const auto pack = dir() / "captured.kcpack";
    const CliRun exported = kcache({"export", "--manifest", manifest.string(), pack.string()},
                                   {"KCACHE_DIR=" + fresh.string()});
    ASSERT_EQ(exported.code, 0) << exported.err;
    EXPECT_NE(exported.out.find("exported 2 entries"), std::string::npos) << exported.out;
    const CliRun from_pack = workload(dir() / "c", {"KCACHE_PACKS=" + pack.string()});
    ASSERT_EQ(from_pack.code, 0) << from_pack.out << from_pack.err;
    EXPECT_NE(from_pack.out.find("jit_compiles 0"), std::string::npos) << from_pack.out;
}

}  // namespace
}  // namespace kcache::test
