// The cache directory: created private, refused when others could write to
// it, opened read-only when it cannot be written. Permission checks do not
// bite for root, so those cases run in a child dropped to uid "nobody".

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "store_fixture.hpp"

using kcache::test::binary_like;
using kcache::test::kNobody;
using kcache::test::LogCapture;
using kcache::test::run_as_user;
using kcache::test::sample_fields;
using kcache::test::test_provenance;
namespace fs = std::filesystem;

namespace {

mode_t mode_of(const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
    return st.st_mode & 07777;
}

void expect_refused(const fs::path& dir, const std::string& fix_hint) {
    auto store = ks::Store::open(dir);
    ASSERT_FALSE(store.ok()) << dir << " was accepted";
    EXPECT_EQ(store.error().code, ks::StoreErrc::unsafe_directory);
    EXPECT_NE(store.error().message.find(dir.string()), std::string::npos) << store.error().message;
    EXPECT_NE(store.error().message.find(fix_hint), std::string::npos) << store.error().message;
}

}  // namespace

// A cache directory owned by uid nobody, reachable by it.
fs::path Store::nobody_dir() {
    EXPECT_EQ(::chmod(dir().c_str(), 0755), 0);
    const fs::path cache = dir() / "nobody-cache";
    fs::create_directory(cache);
    EXPECT_EQ(::chmod(cache.c_str(), 0700), 0);
    EXPECT_EQ(::chown(cache.c_str(), kNobody, kNobody), 0) << "needs root (CI runs as root)";
    return cache;
}

TEST_F(Store, CreatesTheDirectoryPrivate) {
    const fs::path nested = dir() / "a" / "b" / "kcache";
    ASSERT_TRUE(ks::Store::open(nested).ok());
    EXPECT_EQ(mode_of(nested), 0700u);
}

TEST_F(Store, RefusesDirectoriesWritableByOthers) {
    ASSERT_TRUE(ks::Store::open(store_dir()).ok());
    for (mode_t m : {0777, 0770, 0702, 0720}) {
        ASSERT_EQ(::chmod(store_dir().c_str(), m), 0);
        expect_refused(store_dir(), "chmod 700 " + store_dir().string());
    }
    ASSERT_EQ(::chmod(store_dir().c_str(), 0755), 0);  // readable by others is fine
    EXPECT_TRUE(ks::Store::open(store_dir()).ok());
}

TEST_F(Store, RefusesDirectoriesOwnedByAnotherUser) {
    ASSERT_EQ(::geteuid(), 0u) << "this test changes ownership and must run as root (CI does)";
    fs::create_directories(store_dir());
    ASSERT_EQ(::chmod(store_dir().c_str(), 0700), 0);
    ASSERT_EQ(::chown(store_dir().c_str(), kNobody, kNobody), 0);
    expect_refused(store_dir(), "owned by uid 65534");
    // A symlink to it is refused too, naming the symlink and its target.
    const fs::path link = dir() / "link";
    fs::create_directory_symlink(store_dir(), link);
    expect_refused(link, "symlink to " + store_dir().string());
    // A symlink to a safe directory is fine.
    const fs::path good = dir() / "good";
    ASSERT_TRUE(ks::Store::open(good).ok());
    const fs::path good_link = dir() / "good_link";
    fs::create_directory_symlink(good, good_link);
    EXPECT_TRUE(ks::Store::open(good_link).ok());
}

TEST_F(Store, ReadOnlyDirectoryOpensReadOnlyWithAWarning) {
    const fs::path cache = nobody_dir();
    std::string report = run_as_user(kNobody, [&]() -> std::string {
        {
            auto store = ks::Store::open(cache);
            if (!store.ok()) {
                return "first open: " + store.error().message;
            }
            if (!store->put(sample_fields(1), binary_like(3000, 1), test_provenance()).ok()) {
                return "put failed";
            }
        }
        if (::chmod(cache.c_str(), 0500) != 0) {
            return "chmod failed";
        }
        LogCapture log;
        auto store = ks::Store::open(cache);
        if (!store.ok()) {
            return "read-only open: " + store.error().message;
        }
        if (store->mode() != ks::OpenMode::read_only) {
            return "not opened read-only";
        }
        if (!log.contains("opened read-only")) {
            return "no warning";
        }
        auto got = store->get(sample_fields(1));
        if (!got.ok() || got->bytes != binary_like(3000, 1)) {
            return "get failed: " + (got.ok() ? std::string("bytes differ") : got.error().detail);
        }
        auto put = store->put(sample_fields(2), binary_like(10, 2), test_provenance());
        if (put.ok() || put.error().code != ks::StoreErrc::read_only) {
            return "put in a read-only store did not fail with ReadOnly";
        }
        return "";
    });
    EXPECT_EQ(report, "");
}

TEST_F(Store, ReadOnlyDatabaseFileOpensReadOnly) {
    const fs::path cache = nobody_dir();
    std::string report = run_as_user(kNobody, [&]() -> std::string {
        {
            auto store = ks::Store::open(cache);
            if (!store.ok() ||
                !store->put(sample_fields(1), binary_like(300, 1), test_provenance()).ok()) {
                return "setup failed";
            }
        }
        if (::chmod((cache / ks::kStoreFileName).c_str(), 0400) != 0) {
            return "chmod failed";
        }
        auto store = ks::Store::open(cache);
        if (!store.ok() || store->mode() != ks::OpenMode::read_only) {
            return "not opened read-only";
        }
        if (!store->get(sample_fields(1)).ok()) {
            return "get failed";
        }
        return store->put(sample_fields(2), binary_like(1, 1), test_provenance()).ok()
                   ? "put succeeded"
                   : "";
    });
    EXPECT_EQ(report, "");
}

namespace {

// A tmpfs mounted for the test; detached on destruction.
struct TmpfsMount {
    fs::path at;
    bool mounted = false;
    explicit TmpfsMount(fs::path where) : at(std::move(where)) {
        fs::create_directory(at);
        mounted = ::mount("kcache-test", at.c_str(), "tmpfs", 0, "size=16m,mode=0700") == 0;
    }
    ~TmpfsMount() {
        if (mounted) {
            ::umount2(at.c_str(), MNT_DETACH);
        }
    }
};

}  // namespace

TEST_F(Store, ReadOnlyFileSystemOpensReadOnly) {
    TmpfsMount mnt(dir() / "mnt");
    ASSERT_TRUE(mnt.mounted) << "mount tmpfs: " << std::strerror(errno)
                             << " (this test needs root with CAP_SYS_ADMIN, as CI has)";
    const fs::path cache = mnt.at / "cache";
    {
        auto store = ks::Store::open(cache);
        ASSERT_TRUE(store.ok()) << store.error().message;
        ASSERT_TRUE(store->put(sample_fields(1), binary_like(3000, 1), test_provenance()).ok());
    }
    ASSERT_EQ(::mount(nullptr, mnt.at.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr), 0)
        << std::strerror(errno);
    ASSERT_NE(::access(cache.c_str(), W_OK), 0);
    ASSERT_EQ(errno, EROFS);
    LogCapture log;
    auto store = ks::Store::open(cache);
    ASSERT_TRUE(store.ok()) << store.error().message;
    EXPECT_EQ(store->mode(), ks::OpenMode::read_only);
    EXPECT_TRUE(log.contains("opened read-only"));
    auto got = store->get(sample_fields(1));
    ASSERT_TRUE(got.ok()) << got.error().detail;
    EXPECT_EQ(got->bytes, binary_like(3000, 1));
    auto put = store->put(sample_fields(2), binary_like(10, 2), test_provenance());
    ASSERT_FALSE(put.ok());
    EXPECT_EQ(put.error().code, ks::StoreErrc::read_only);
}
