// Two stores of one process on one file: opening the second must leave the
// first connection's POSIX locks on store.sqlite in place. Closing any
// descriptor of a file drops all of the process's locks on it, and another
// process may then take the exclusive lock, checkpoint and delete the WAL
// while this one keeps committing into the deleted file: its entries are lost.

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "child_process.hpp"
#include "kcache/common/unique_fd.hpp"
#include "store_fixture.hpp"

namespace kt = kcache::test;
using kcache::test::binary_like;
using kcache::test::ChildGroup;
using kcache::test::sample_fields;
using kcache::test::test_provenance;

namespace {

// SQLite's unix VFS takes its database locks on these bytes (os_unix.c):
// a reader holds a read lock inside the shared range.
constexpr off_t kPendingByte = 0x40000000;
constexpr off_t kSharedFirst = kPendingByte + 2;
constexpr off_t kSharedSize = 510;

// In a child: reports "held <pid>" when another process holds a lock on the
// shared range of `db` that would block a writer, "free" otherwise.
void probe_lock(const std::string& db) {
    kcache::UniqueFd fd(::open(db.c_str(), O_RDONLY | O_CLOEXEC));
    struct flock lk {};
    lk.l_type = F_WRLCK;
    lk.l_whence = SEEK_SET;
    lk.l_start = kSharedFirst;
    lk.l_len = kSharedSize;
    if (!fd.valid() || ::fcntl(fd.get(), F_GETLK, &lk) != 0) {
        kt::report_line("error");
    } else {
        kt::report_line(lk.l_type == F_UNLCK ? "free" : "held " + std::to_string(lk.l_pid));
    }
}

// Runs the current test as one child of `role` on the store file `db` and
// returns the line it reported.
std::string in_child(const std::string& role, const std::filesystem::path& db) {
    auto group = ChildGroup::spawn(1, role, {{"DB", db.string()}});
    group.release();
    auto results = group.wait_all(std::chrono::seconds(60));
    if (results.size() != 1 || !results[0].ok() || results[0].lines.size() != 1) {
        return "child failed: " + (results.empty() ? std::string("none") : results[0].describe());
    }
    return results[0].lines[0];
}

// The child roles of the tests below; returns true in a child.
bool run_child_role() {
    const std::string role = kt::child_role();
    if (role.empty() || !kt::wait_for_start_gate()) {
        return !role.empty();
    }
    const std::string db = kt::child_env("DB");
    if (role == "probe") {
        probe_lock(db);
    } else if (role == "reader") {
        // Opening and closing the only other connection: when it can take the
        // exclusive lock, SQLite checkpoints and deletes the WAL at close.
        kt::report_line(kt::raw_sql(db, "SELECT count(*) FROM entries"));
    }
    return true;
}

}  // namespace

TEST_F(Store, ASecondOpenKeepsTheFirstConnectionsLocks) {
    if (run_child_role()) {
        return;
    }
    auto first = open_store();
    for (int i = 0; i < 4; ++i) {
        ASSERT_TRUE(first.put(sample_fields(i), binary_like(2048, i), test_provenance()).ok());
    }
    auto second = open_store();  // checks the file's header while `first` is open
    EXPECT_EQ(in_child("probe", db_path()), "held " + std::to_string(::getpid()));
    EXPECT_EQ(in_child("reader", db_path()), "4");
    for (int i = 4; i < 8; ++i) {
        ASSERT_TRUE(first.put(sample_fields(i), binary_like(2048, i), test_provenance()).ok());
    }
    EXPECT_EQ(in_child("reader", db_path()), "8") << "entries committed after another "
                                                     "process's visit are lost";
}

// kcache warm's shape: a read-only store for its precheck, then the
// service's writable store, which does every put.
TEST_F(Store, AWritableOpenAfterAReadOnlyOneKeepsItsLocks) {
    if (run_child_role()) {
        return;
    }
    { open_store(); }  // the store exists
    ks::Policy read_only;
    read_only.mode = ks::OpenMode::read_only;
    auto precheck = open_store(read_only);
    EXPECT_FALSE(precheck.get(sample_fields(0)).ok());
    auto writer = open_store();
    ASSERT_TRUE(writer.put(sample_fields(0), binary_like(2048, 0), test_provenance()).ok());
    EXPECT_EQ(in_child("probe", db_path()), "held " + std::to_string(::getpid()));
    EXPECT_EQ(in_child("reader", db_path()), "1");
    for (int i = 1; i < 6; ++i) {
        ASSERT_TRUE(writer.put(sample_fields(i), binary_like(2048, i), test_provenance()).ok());
    }
    EXPECT_EQ(in_child("reader", db_path()), "6");
    EXPECT_TRUE(precheck.get(sample_fields(5)).ok());
}
