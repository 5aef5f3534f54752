// The files of a driver's compiler (compiler_files.hpp) and the digest of
// them in the device identity, on the test platform's real driver (PoCL, or
// rusticl with KCACHE_TEST_PLATFORM=rusticl): which files are named, that
// two processes name them alike, and that the identity follows the vendor
// library's path and mtime and a data file its compiler reads, with the
// library copied elsewhere and offered to the ICD loader alone.
#include <gtest/gtest.h>

#include <filesystem>

#include "child_process.hpp"
#include "driver_copy.hpp"
#include "kcache/common/hex.hpp"
#include "kcache/device_db/compiler_files.hpp"
#include "kcache/device_db/identity.hpp"
#include "temp_dir.hpp"
#include "test_platform.hpp"

namespace kcache::device_db {
namespace {

namespace fs = std::filesystem;
using test::probe_in_child;

std::string file_name(const std::string& path) {
    return fs::path(path).filename().string();
}

// The files of the test platform's driver, or a test failure.
std::vector<CompilerFile> test_platform_files() {
    cl_platform_id platform = test::find_test_platform();
    EXPECT_NE(platform, nullptr) << "no platform named " << test::test_platform_name();
    return platform != nullptr ? compiler_files(platform) : std::vector<CompilerFile>{};
}

std::size_t present(const std::vector<CompilerFile>& files, CompilerFileRole role,
                    const std::string& name_part) {
    std::size_t n = 0;
    for (const CompilerFile& f : files) {
        n += f.role == role && f.present && file_name(f.path).find(name_part) != std::string::npos;
    }
    return n;
}

TEST(CompilerFiles, NameTheDriversLibraryItsCompilerLibrariesAndItsData) {
    const auto files = test_platform_files();
    ASSERT_FALSE(files.empty());
    const CompilerFile& icd = files.front();
    EXPECT_EQ(icd.role, CompilerFileRole::icd);
    EXPECT_TRUE(icd.present) << icd.path;
    EXPECT_GT(icd.size, 0u);
    EXPECT_EQ(icd.path, icd_library_path(test::find_test_platform()));
    // Both drivers here link LLVM and clang (rusticl SPIRV-LLVM-Translator too).
    EXPECT_EQ(present(files, CompilerFileRole::library, "libLLVM-"), 1u) << icd.path;
    EXPECT_EQ(present(files, CompilerFileRole::library, "libclang-cpp"), 1u) << icd.path;
    const std::string name = file_name(icd.path);
    if (name.starts_with("libpocl")) {
        EXPECT_GE(present(files, CompilerFileRole::data, "kernel-"), 1u);
        EXPECT_EQ(present(files, CompilerFileRole::data, "opencl-c.h"), 1u);
    } else if (name.starts_with("libRusticlOpenCL")) {
        EXPECT_EQ(present(files, CompilerFileRole::library, "libLLVMSPIRVLib"), 1u);
        EXPECT_EQ(present(files, CompilerFileRole::data, "spirv64-mesa3d-.spv"), 1u);
    } else {
        ADD_FAILURE() << "a driver these tests do not know: " << icd.path;
    }
    for (const CompilerFile& f : files) {
        EXPECT_FALSE(f.role == CompilerFileRole::library && !is_compiler_library(file_name(f.path)))
            << f.path;
    }
}

TEST(CompilerFiles, TheIdentityCarriesTheirDigestIntoTheCompilerId) {
    auto id = probe(test::find_test_device());
    ASSERT_TRUE(id.ok()) << id.error().message;
    const std::string digest = compiler_files_digest(test_platform_files());
    ASSERT_EQ(digest.size(), 16u);
    EXPECT_EQ(id->compiler_files, digest);
    const std::string uuid = id->driver_uuid ? to_hex(*id->driver_uuid) : "";
    EXPECT_EQ(jit_compiler_id(*id), "jit:" + id->driver_version + ":" + uuid + ":" + digest);
    DeviceIdentity by_hand = *id;
    by_hand.compiler_files.clear();
    EXPECT_EQ(jit_compiler_id(by_hand), "jit:" + id->driver_version + ":" + uuid);
}

TEST(CompilerFiles, OnlyCompilerLibrariesTheDriverLinksCount) {
    for (const char* name : {"libLLVM-15.so.1", "libLLVM.so.18.1", "libLLVMSPIRVLib.so.15",
                             "libclang-cpp.so.15", "libSPIRV-Tools.so", "libigc.so.1"}) {
        EXPECT_TRUE(is_compiler_library(name)) << name;
    }
    for (const char* name : {"libc.so.6", "libstdc++.so.6", "libz.so.1", "libOpenCL.so.1",
                             "libpocl.so.2", "libxml2.so.2", "llvm.so"}) {
        EXPECT_FALSE(is_compiler_library(name)) << name;
    }
    EXPECT_TRUE(linked_compiler_libraries("/nowhere/libpocl.so.2").empty());
    EXPECT_TRUE(linked_compiler_libraries("").empty());
    ASSERT_FALSE(test_platform_files().empty());
    const std::string icd = icd_library_path(test::find_test_platform());
    for (const std::string& lib : linked_compiler_libraries(icd)) {
        EXPECT_TRUE(is_compiler_library(file_name(lib))) << lib;
        EXPECT_TRUE(fs::exists(lib)) << lib;
    }
}

TEST(CompilerFiles, DataFilesFollowEachDriversLayout) {
    const auto pocl = driver_data_files("/usr/lib/x86_64-linux-gnu/libpocl.so.2");
    ASSERT_FALSE(pocl.empty());
    EXPECT_EQ(pocl.front(),
              "/usr/lib/x86_64-linux-gnu/../../share/pocl/include/_builtin_renames.h");
    const auto local = driver_data_files("/opt/pocl/lib/libpocl.so.2");
    ASSERT_FALSE(local.empty());
    EXPECT_EQ(local.front(), "/opt/pocl/lib/../share/pocl/include/_builtin_renames.h");
    EXPECT_EQ(driver_data_files("/somewhere/libRusticlOpenCL.so.1"),
              (std::vector<std::string>{"/usr/lib/clc/spirv64-mesa3d-.spv",
                                        "/usr/lib/clc/spirv-mesa3d-.spv"}));
    EXPECT_EQ(
        driver_data_files("/usr/lib/x86_64-linux-gnu/intel-opencl/libigdrcl.so"),
        (std::vector<std::string>{"/usr/lib/x86_64-linux-gnu/intel-opencl/../libigc.so.1",
                                  "/usr/lib/x86_64-linux-gnu/intel-opencl/../libigdfcl.so.1"}));
    EXPECT_TRUE(driver_data_files("/usr/lib/libnvidia-opencl.so.1").empty());
    EXPECT_TRUE(compiler_files_of("").empty());
}

TEST(CompilerFiles, TheDigestFollowsEveryStatFieldAndNothingElse) {
    const std::vector<CompilerFile> base = {
        {CompilerFileRole::icd, "/lib/libpocl.so.2", true, 1000, 5},
        {CompilerFileRole::data, "/usr/share/pocl/kernel.bc", false, 0, 0},
    };
    const std::string digest = compiler_files_digest(base);
    EXPECT_EQ(digest.size(), 16u);
    EXPECT_EQ(compiler_files_digest(base), digest);
    EXPECT_EQ(compiler_files_digest({}), "");
    const auto changed = [&](auto change) {
        auto files = base;
        change(files[0]);
        return compiler_files_digest(files);
    };
    EXPECT_NE(changed([](CompilerFile& f) { f.path = "/tmp/libpocl.so.2"; }), digest);
    EXPECT_NE(changed([](CompilerFile& f) { f.size = 1001; }), digest);
    EXPECT_NE(changed([](CompilerFile& f) { f.mtime_ns = 6; }), digest);
    EXPECT_NE(changed([](CompilerFile& f) { f.present = false; }), digest);
    EXPECT_NE(changed([](CompilerFile& f) { f.role = CompilerFileRole::library; }), digest);
}

class CompilerIdentity : public test::TempDirTest {};

TEST_F(CompilerIdentity, IsTheSameInTwoProcesses) {
    if (test::serve_probe_role()) {
        return;
    }
    const auto first = probe_in_child();
    const auto second = probe_in_child();
    EXPECT_EQ(first.compiler_files, second.compiler_files);
    EXPECT_EQ(first.compiler_id, second.compiler_id);
    auto here = probe(test::find_test_device());
    ASSERT_TRUE(here.ok()) << here.error().message;
    EXPECT_EQ(here->compiler_files, first.compiler_files);
}

TEST_F(CompilerIdentity, FollowsTheLibrarysPathAndMtime) {
    if (test::serve_probe_role()) {
        return;
    }
    const std::string original = icd_library_path(test::find_test_platform());
    ASSERT_FALSE(original.empty());
    const auto here = probe_in_child();
    const test::DriverCopy a = test::copy_driver(original, dir() / "a");
    const test::DriverCopy b = test::copy_driver(original, dir() / "b");
    const auto at_a = probe_in_child(a.icd_dir);
    const auto at_b = probe_in_child(b.icd_dir);
    EXPECT_NE(at_a.compiler_files, here.compiler_files);  // the same bytes, at another path
    EXPECT_NE(at_a.compiler_files, at_b.compiler_files);
    EXPECT_NE(at_a.compiler_id, here.compiler_id);
    test::shift_mtime(a.library, -3600);  // an older build in the same place
    const auto touched = probe_in_child(a.icd_dir);
    EXPECT_NE(touched.compiler_files, at_a.compiler_files);
    test::shift_mtime(a.library, 3600);
    EXPECT_EQ(probe_in_child(a.icd_dir).compiler_files, at_a.compiler_files);
}

TEST_F(CompilerIdentity, FollowsADataFileTheCompilerReads) {
    if (test::serve_probe_role()) {
        return;
    }
    const std::string original = icd_library_path(test::find_test_platform());
    if (!file_name(original).starts_with("libpocl")) {
        // rusticl reads libclc at the path Mesa was built with, whatever
        // library loads it: NameTheDriversLibraryItsCompilerLibrariesAndItsData.
        GTEST_SKIP() << "no data file of " << original << " moves with its library";
    }
    const test::DriverCopy copy = test::copy_driver(original, dir() / "pocl");
    // PoCL reads its data relative to its library: the copy's, linked back.
    const fs::path header = dir() / "pocl" / "share" / "pocl" / "include" / "opencl-c.h";
    ASSERT_TRUE(fs::is_symlink(header)) << header;
    const auto linked = probe_in_child(copy.icd_dir);
    test::make_real(header);  // the same size and mtime: the same identity
    EXPECT_EQ(probe_in_child(copy.icd_dir).compiler_files, linked.compiler_files);
    test::shift_mtime(header, 60);
    EXPECT_NE(probe_in_child(copy.icd_dir).compiler_files, linked.compiler_files);
}

}  // namespace
}  // namespace kcache::device_db
