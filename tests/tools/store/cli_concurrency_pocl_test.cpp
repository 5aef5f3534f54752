// Two kcache processes on one store (cli_concurrency_fixture.hpp): warm on
// PoCL and import as the writer. Pull as the writer, which needs a remote,
// is in cli_concurrency_pull_pocl_test.cpp.

#include <gtest/gtest.h>

#include "cli_concurrency_fixture.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

class CliConcurrencyDevice : public CliConcurrency {};

TEST_F(CliConcurrencyDevice, WarmKeepsEveryEntryItBuiltWhileOtherCommandsUseTheStore) {
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

TEST_F(CliConcurrencyDevice, ImportKeepsEveryEntryWhileOtherCommandsUseTheStore) {
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
