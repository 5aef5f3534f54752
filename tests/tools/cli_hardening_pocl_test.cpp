// CLI tests on PoCL of what hostile conditions do to `warm`: builds that
// cannot be stored, damaged entries, manifest sources that are not files,
// timeout records and larger budgets, compiler logs, a missing helper.

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "cli_runner.hpp"
#include "kcache/store/store.hpp"
#include "store_fixture.hpp"

namespace kcache::test {
namespace {

class CliDeviceHardening : public CliTest {
  protected:
    // A manifest with one small kernel `scale` (or `source` when given).
    std::filesystem::path manifest(const std::string& source = "") {
        std::ofstream(dir() / "scale.cl")
            << (source.empty() ? "__kernel void scale(__global float* x, float a) "
                                 "{ x[get_global_id(0)] *= a; }\n"
                               : source);
        const auto path = dir() / "manifest.json";
        std::ofstream(path) << R"({"kernels": [{"name": "scale", "sources": ["scale.cl"]}]})";
        return path;
    }
};

TEST_F(CliDeviceHardening, BuildLargerThanTheSizeBoundIsCountedAsNotStored) {
    const auto m = manifest();
    const CliRun r = kcache({"warm", "--manifest", m.string(), "--json"}, {"KCACHE_MAX_SIZE=1K"});
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    const auto j = r.json();
    EXPECT_EQ(j["built"], 0) << r.out;
    EXPECT_EQ(j["not_stored"], 1) << r.out;
    EXPECT_NE(j["items"][0]["message"].get<std::string>().find("exceeds the store's bound"),
              std::string::npos)
        << r.out;
    const CliRun text = kcache({"warm", "--manifest", m.string()}, {"KCACHE_MAX_SIZE=1K"});
    EXPECT_EQ(text.code, 1);
    EXPECT_NE(text.out.find("1 not stored"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("not stored: scale"), std::string::npos) << text.out;
}

// The store on a file system that is full: the compile succeeds, the put
// fails with SQLite's "disk is full", and warm says so and exits 1.
TEST_F(CliDeviceHardening, BuildOnAFullDiskIsCountedAsNotStored) {
    if (::geteuid() != 0) {
        GTEST_SKIP() << "mounting a small tmpfs needs root (CI runs as root); the size-bound "
                        "case above covers the same path";
    }
    const auto mnt = dir() / "tiny";
    std::filesystem::create_directories(mnt);
    if (::mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=256k,mode=0700") != 0) {
        GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno)
                     << "; a container without CAP_SYS_ADMIN?)";
    }
    struct Unmount {
        std::filesystem::path p;
        ~Unmount() { ::umount2(p.c_str(), MNT_DETACH); }
    } unmount{mnt};
    const std::string store = "KCACHE_DIR=" + (mnt / "store").string();
    // Held open so that SQLite's shared-memory file exists before the disk fills.
    auto held = ks::Store::open(mnt / "store");
    ASSERT_TRUE(held.ok()) << held.error().message;
    {
        std::ofstream fill(mnt / "filler", std::ios::binary);  // take the rest of the space
        const std::string block(4096, 'x');
        while (fill.write(block.data(), block.size())) {
        }
    }
    const auto filled = static_cast<off_t>(std::filesystem::file_size(mnt / "filler"));
    ASSERT_EQ(::truncate((mnt / "filler").c_str(), filled - 8 * 1024), 0);
    const CliRun r = kcache({"warm", "--manifest", manifest().string(), "--json"}, {store});
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    const auto j = r.json();
    EXPECT_EQ(j["not_stored"], 1) << r.out;
    EXPECT_NE(j["items"][0]["message"].get<std::string>().find("full"), std::string::npos) << r.out;
}

TEST_F(CliDeviceHardening, WarmRebuildsADamagedEntryInsteadOfCountingIt) {
    const auto m = manifest();
    ASSERT_EQ(kcache({"warm", "--manifest", m.string()}).code, 0);
    raw_sql(store_dir() / ks::kStoreFileName, "UPDATE entries SET checksum = zeroblob(16)");
    EXPECT_EQ(damage_hot_copies(store_dir()), 1u);  // the entry's other form
    const CliRun r = kcache({"warm", "--manifest", m.string(), "--json"});
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.json()["already_cached"], 0) << r.out;
    EXPECT_EQ(r.json()["built"], 1) << r.out;
    EXPECT_EQ(kcache({"verify"}).code, 0) << "the entry was replaced by a good one";
    EXPECT_EQ(kcache({"warm", "--manifest", m.string(), "--json"}).json()["already_cached"], 1);
}

TEST_F(CliDeviceHardening, ManifestSourcesMustBeBoundedRegularFiles) {
    std::filesystem::create_directories(dir() / "srcdir");
    ASSERT_EQ(::mkfifo((dir() / "fifo.cl").c_str(), 0600), 0);
    for (const std::string& source :
         {std::string("srcdir"), std::string("fifo.cl"), std::string("/dev/zero")}) {
        const auto path = dir() / "m.json";
        std::ofstream(path) << R"({"kernels": [{"name": "k", "sources": [")" << source
                            << R"("]}]})";
        const CliRun r = kcache({"warm", "--manifest", path.string()});
        EXPECT_EQ(r.code, 2) << source << ": " << r.err;
        EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
    }
    const CliRun zero = kcache({"warm", "--manifest", "/dev/zero"});
    EXPECT_EQ(zero.code, 2) << zero.err;
}

TEST_F(CliDeviceHardening, TimeoutRecordGivesWayToALargerBudget) {
    const std::vector<std::string> dot = {"warm", "--kernels", "dot", "--dtypes", "f32", "--json"};
    auto quick = dot;
    quick.insert(quick.end(), {"--timeout", "1ms"});
    const CliRun first = kcache(quick);
    EXPECT_EQ(first.json()["timed_out"], 2) << first.out << first.err;
    const CliRun again = kcache(quick);  // same budget: answered from the record
    EXPECT_EQ(again.json()["timed_out"], 2) << again.out;
    EXPECT_EQ(again.json()["items"][0]["rung"], "failure_record") << again.out;
    const CliRun explained = kcache({"explain", "dot:dtype=f32", "--json"});
    ASSERT_EQ(explained.code, 0) << explained.err;
    EXPECT_EQ(explained.json()[0]["failure"]["kind"], "timeout") << explained.out;
    EXPECT_EQ(explained.json()[0]["failure"]["budget_ms"], 1) << explained.out;
    EXPECT_NE(kcache({"explain", "dot:dtype=f32"}).out.find("under a budget of 1 ms"),
              std::string::npos);
    auto patient = dot;
    patient.insert(patient.end(), {"--timeout", "600s"});
    const CliRun later = kcache(patient);
    ASSERT_EQ(later.code, 0) << later.out << later.err;
    EXPECT_EQ(later.json()["built"], 2) << later.out;
}

TEST_F(CliDeviceHardening, BuildErrorsShowTheLogAndTheClErrorName) {
    const auto m = manifest("__kernel void scale(__global float* x) { x[0] = undeclared_name; }\n");
    const CliRun text = kcache({"warm", "--manifest", m.string()});
    EXPECT_EQ(text.code, 1) << text.out << text.err;
    EXPECT_NE(text.out.find("CL_BUILD_PROGRAM_FAILURE"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("    "), std::string::npos) << "the log, indented: " << text.out;
    EXPECT_NE(text.out.find("undeclared_name"), std::string::npos) << text.out;
    const CliRun json = kcache({"warm", "--manifest", m.string(), "--json"});
    const auto item = json.json()["items"][0];
    EXPECT_EQ(item["message"].get<std::string>().find('\n'), std::string::npos);
    EXPECT_NE(item["log"].get<std::string>().find("undeclared_name"), std::string::npos)
        << json.out;
    const CliRun failures = kcache({"ls", "--failures", "--json"});
    ASSERT_EQ(failures.json().size(), 1u) << failures.out;
    EXPECT_EQ(failures.json()[0]["kind"], "build_error");
    EXPECT_NE(failures.json()[0]["detail"].get<std::string>().find("undeclared_name"),
              std::string::npos);
}

TEST_F(CliDeviceHardening, AMissingJitHelperIsNamed) {
    const CliRun r = kcache({"warm", "--manifest", manifest().string()},
                            {"KCACHE_JIT_PATH=/nonexistent/kcache-jit"});
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("/nonexistent/kcache-jit"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kcache::test
