#pragma once
// Two kcache processes on one store: a writer (warm, import, pull) runs while
// another thread runs every command that opens the store (stats, ls, verify,
// gc, export) and the sqlite3 shell, each in a process of its own, over and
// over. Every entry the writer reports stored must be in the store
// afterwards: an open of the store inside the writer once dropped its SQLite
// locks, so a reader's close deleted the WAL the writer went on committing
// into.

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>

#include "cli_runner.hpp"

namespace kcache::test {

class CliConcurrency : public CliTest {
  protected:
    std::filesystem::path db() const;

    // Rows in the store, counted by SQLite in this process.
    std::string rows();

    // Writes a manifest of `n` variants of one small kernel, named `prefix`N
    // (each prefix its own keys), and returns its path.
    std::filesystem::path manifest(const std::string& prefix, int n);

    // Runs every reading command in turn, in one more process each time,
    // until `stop`; returns how many ran. A command that fails fails the test.
    int read_until(const std::atomic<bool>& stop);

    // Runs `write` while another thread runs read_until(); returns the
    // writer's result and checks that at least `min_runs` reading commands
    // ran while it did.
    CliRun with_readers(const std::function<CliRun()>& write, int min_runs);
};

}  // namespace kcache::test
