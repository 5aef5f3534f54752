// Two kcache processes on one store: a writer (warm on PoCL, import) while
// another process runs every command that opens the store (stats, ls,
// verify, gc, export) and the sqlite3 shell, over and over. Every entry the
// writer reports stored must be in the store afterwards: an open of the
// store inside the writer once dropped its SQLite locks, so a reader's close
// deleted the WAL the writer went on committing into.

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "cli_runner.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

class CliConcurrencyPocl : public CliTest {
  protected:
    std::filesystem::path db() const { return store_dir() / ks::kStoreFileName; }

    // Rows in the store, counted by SQLite in this process.
    std::string rows() { return raw_sql(db(), "SELECT count(*) FROM entries"); }

    // Writes a manifest of `n` variants of one small kernel, named `prefix`N
    // (each prefix its own keys), and returns its path.
    std::filesystem::path manifest(const std::string& prefix, int n) {
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

    // Runs every reading command in turn, in one more process each time,
    // until `stop`; returns how many ran. A command that fails fails the test.
    int read_until(const std::atomic<bool>& stop) {
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
                spec.program = "/bin/sh";  // sqlite3 found on PATH
                spec.args = {"-c", "exec sqlite3 \"$0\" 'SELECT count(*) FROM entries;'",
                             db().string()};
                const auto r =
                    compiler::run(spec, compiler::Clock::now() + std::chrono::minutes(1));
                EXPECT_EQ(r.exit_code, 0) << "sqlite3: " << r.err;
                continue;
            }
            const CliRun r = kcache(commands[i % 6]);
            EXPECT_EQ(r.code, 0) << commands[i % 6][0] << ": " << r.err;
            std::filesystem::remove(pack);
        }
        return runs;
    }

    // Runs `write` while another thread runs read_until(); returns the
    // writer's result and checks that at least `min_runs` reading commands
    // ran while it did.
    CliRun with_readers(const std::function<CliRun()>& write, int min_runs) {
        std::atomic<bool> stop{false};
        int runs = 0;
        std::thread readers([&] { runs = read_until(stop); });
        const CliRun r = write();
        stop = true;
        readers.join();
        EXPECT_GE(runs, min_runs) << "the readers did not overlap the writer";
        return r;
    }
};

TEST_F(CliConcurrencyPocl, WarmKeepsEveryEntryItBuiltWhileOtherCommandsUseTheStore) {
    // An existing store with its hot copies, as on a machine that warmed before.
    const CliRun first = kcache({"warm", "--manifest", manifest("a", 1).string(), "--json"});
    ASSERT_EQ(first.code, 0) << first.err;
    int stored = first.json()["built"].get<int>();
    ASSERT_EQ(stored, 1);
    // Rounds: the loss needed a reader to close its connection between two
    // of the writer's commits, after the writer had opened its second store.
    for (const std::string round : {"b", "c", "d"}) {
        const auto m = manifest(round, 6);
        const CliRun warm = with_readers(
            [&] {
                return kcache(
                    {"warm", "--manifest", m.string(), "--json", "--quiet", "--jobs", "1"});
            },
            6);
        ASSERT_EQ(warm.code, 0) << warm.err;
        EXPECT_EQ(warm.json()["built"], 6) << warm.out;
        stored += warm.json()["built"].get<int>();
        EXPECT_EQ(rows(), std::to_string(stored))
            << "round " << round << ": warm said " << warm.json()["built"] << " built";
        // Nothing lost hides behind a hot copy: the next warm finds all of
        // them in the store itself.
        const CliRun again = kcache({"warm", "--manifest", m.string(), "--json", "--quiet"});
        EXPECT_EQ(again.json()["already_cached"], 6) << again.out;
        EXPECT_EQ(again.json()["built"], 0);
    }
    EXPECT_EQ(kcache({"ls", "--json"}).json().size(), static_cast<std::size_t>(stored));
    EXPECT_EQ(kcache({"verify"}).code, 0);
}

TEST_F(CliConcurrencyPocl, ImportKeepsEveryEntryWhileOtherCommandsUseTheStore) {
    constexpr int kEntries = 1500;
    const auto pack = dir() / "many.pack";
    {
        auto source = ks::Store::open(dir() / "source");
        ASSERT_TRUE(source.ok()) << source.error().message;
        for (int i = 0; i < kEntries; ++i) {
            ASSERT_TRUE(
                source->put(sample_fields(i), binary_like(2048, i), test_provenance()).ok());
        }
        ASSERT_TRUE(source->export_pack(pack).ok());
    }
    ASSERT_EQ(kcache({"stats"}).code, 0);  // the store exists
    const CliRun imported = with_readers(
        [&] {
            return kcache({"import", pack.string(), "--json"});
        },
        2);
    ASSERT_EQ(imported.code, 0) << imported.err;
    EXPECT_EQ(imported.json()["imported"], kEntries);
    EXPECT_EQ(rows(), std::to_string(kEntries));
    EXPECT_EQ(kcache({"ls", "--json"}).json().size(), static_cast<std::size_t>(kEntries));
}

}  // namespace
}  // namespace kcache::test
