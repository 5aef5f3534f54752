#include "cli_concurrency_fixture.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <thread>
#include <vector>

#include "kcache/compiler/subprocess.hpp"
#include "store_fixture.hpp"

namespace kcache::test {

std::filesystem::path CliConcurrency::db() const {
    return store_dir() / ks::kStoreFileName;
}

std::string CliConcurrency::rows() {
    return raw_sql(db(), "SELECT count(*) FROM entries");
}

std::filesystem::path CliConcurrency::manifest(const std::string& prefix, int n) {
    std::ofstream(dir() / "scale.cl") << "__kernel void scale(__global float* x, float a) "
                                         "{ x[get_global_id(0)] *= a * K; }\n";
    std::string variants;
    for (int i = 0; i < n; ++i) {
        variants += (i ? "," : "") + std::string(R"({"name": ")") + prefix + std::to_string(i) +
                    R"(", "options": "-DK=)" + std::to_string(i) + "." +
                    std::to_string(static_cast<int>(prefix[0])) + R"(f"})";
    }
    const auto path = dir() / (prefix + ".json");
    std::ofstream(path) << R"({"kernels": [{"name": "scale", "sources": ["scale.cl"],
            "entry_points": ["scale"], "options": "-cl-std=CL1.2", "variants": [)"
                        << variants << "]}]}";
    return path;
}

int CliConcurrency::read_until(const std::atomic<bool>& stop) {
    int runs = 0;
    for (int i = 0; !stop; ++i, ++runs) {
        const auto pack = dir() / ("export-" + std::to_string(i) + ".pack");
        const std::vector<std::vector<std::string>> commands = {{"stats"},
                                                                {"ls"},
                                                                {"verify"},
                                                                {"gc", "--older-than", "3650d"},
                                                                {"export", pack.string()}};
        if (i % 6 == 5) {
            compiler::SpawnSpec spec;
            // sqlite3 found on PATH. With a busy timeout, as kcache has: without
            // one the shell fails at once while a closing connection checkpoints.
            spec.program = "/bin/sh";
            spec.args = {
                "-c", "exec sqlite3 -cmd '.timeout 30000' \"$0\" 'SELECT count(*) FROM entries;'",
                db().string()};
            const auto r = compiler::run(spec, compiler::Clock::now() + std::chrono::minutes(1));
            EXPECT_EQ(r.exit_code, 0) << "sqlite3: " << r.err;
            continue;
        }
        const CliRun r = kcache(commands[i % 6]);
        EXPECT_EQ(r.code, 0) << commands[i % 6][0] << ": " << r.err;
        std::filesystem::remove(pack);
    }
    return runs;
}

CliRun CliConcurrency::with_readers(const std::function<CliRun()>& write, int min_runs) {
    std::atomic<bool> stop{false};
    int runs = 0;
    std::thread readers([&] { runs = read_until(stop); });
    const CliRun r = write();
    stop = true;
    readers.join();
    EXPECT_GE(runs, min_runs) << "the readers did not overlap the writer";
    return r;
}

}  // namespace kcache::test
