#pragma once
// Shared helpers of the store tests: sample keys (store_samples.hpp),
// binary-like payloads, a fixture with a private store directory, and raw
// SQLite access for tests that damage or forge database files the way a disk
// or an old kcache would.

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "kcache/store/pack.hpp"
#include "kcache/store/store.hpp"
#include "store_samples.hpp"
#include "temp_dir.hpp"

namespace ks = kcache::store;

namespace kcache::test {

// `n` bytes resembling a device binary: runs of instruction-like words with
// a small vocabulary, string tables and some incompressible noise, seeded by
// `seed` (so equal seeds give equal bytes). zstd -3 shrinks it ~2-3x.
ks::Bytes binary_like(std::size_t n, std::uint64_t seed);

// A policy that defers SQLite to the first need (Policy::defer_open), as
// Cache::open's does.
inline ks::Policy deferred_policy() {
    ks::Policy p;
    p.defer_open = true;
    return p;
}

// Runs `sql` on the SQLite file `db` with the C API directly; fails the test
// on error. Returns the first column of the first row as text, if any.
std::string raw_sql(const std::filesystem::path& db, const std::string& sql);

// Runs `sql` with one blob parameter.
void raw_sql_blob(const std::filesystem::path& db, const std::string& sql,
                  const std::vector<std::uint8_t>& blob);

// Reads a blob column (first row) from `db`.
std::vector<std::uint8_t> raw_blob(const std::filesystem::path& db, const std::string& sql);

// Flips the last byte of every hot copy in the store directory `store_dir`
// (the way a disk would damage one); returns how many there were.
std::size_t damage_hot_copies(const std::filesystem::path& store_dir);

// Rewrites the hot copy at `path` to hold `bytes`, its size and XXH3-128
// checksum recomputed and the rest of it (key record, tag) kept: a copy
// crafted by someone who knows the format but not the store's secret.
void craft_hot_copy(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes);

// Paths of the hot copies in the store directory `store_dir`.
std::vector<std::filesystem::path> hot_copies(const std::filesystem::path& store_dir);

// Returns the file's bytes.
std::string file_bytes(const std::filesystem::path& p);

// An unprivileged uid ("nobody") for tests that need permission checks to bite.
inline constexpr unsigned kNobody = 65534;

// Runs `body` in a forked child that has dropped to uid/gid `uid` (so that
// permission bits apply, even when the tests run as root). Returns the
// child's report: "" when `body` returned "", else its message or how it died.
std::string run_as_user(unsigned uid, const std::function<std::string()>& body);

// A sink capturing store log messages for the life of the object.
class LogCapture {
  public:
    LogCapture();
    ~LogCapture();
    std::vector<std::string> messages() const;
    bool contains(const std::string& needle) const;
};

}  // namespace kcache::test

// Store tests: each test gets dir(); the store lives in store_dir().
class Store : public kcache::test::TempDirTest {
  protected:
    std::filesystem::path store_dir() const { return dir() / "cache"; }
    std::filesystem::path db_path() const { return store_dir() / ks::kStoreFileName; }
    // Opens the store in store_dir() or fails the test.
    ks::Store open_store(ks::Policy policy = {});
    // A fresh cache directory owned by uid kNobody (dir_safety_test.cpp).
    std::filesystem::path nobody_dir();

  public:
    ks::Store open_store_for_test(ks::Policy policy = {}) { return open_store(std::move(policy)); }
};
