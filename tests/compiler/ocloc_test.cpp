// CompilerOcloc.*: the AOT backend against the installed ocloc (no GPU needed).

#include "kcache/compiler/ocloc.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <cstdlib>
#include <fstream>
#include <optional>

#include "jit_support.hpp"
#include "kcache/compiler/binary_check.hpp"
#include "temp_dir.hpp"

namespace kcache::compiler {
namespace {

using namespace std::chrono_literals;

const char* kKernel =
    "__kernel void add(__global float* a, __global const float* b) {\n"
    "    size_t i = get_global_id(0);\n    a[i] += b[i];\n}\n";

class CompilerOcloc : public test::TempDirTest {
  protected:
    OclocCompiler ocloc(const std::string& path = "/usr/bin/ocloc") const {
        OclocConfig c;
        c.ocloc_path = path;
        c.guard_path = test::jit_helper_path();
        c.scratch_root = dir().string();
        return OclocCompiler(c);
    }
    Result<AotBinary, OclocError> build(const std::string& target, const char* source = kKernel,
                                        std::chrono::milliseconds limit = 60s) const {
        return ocloc().compile(AotRequest{source, "", target}, Clock::now() + limit);
    }
};

TEST_F(CompilerOcloc, CompilesForATargetName) {
    auto r = build("tgllp");
    ASSERT_TRUE(r.ok()) << r.error().message << "\n" << r.error().log;
    EXPECT_EQ(r->format, AotFormat::device_elf);
    auto sections = check_device_elf(r->binary);
    ASSERT_TRUE(sections.ok()) << sections.error().message;
    EXPECT_NE(sections->find("Intel(R) OpenCL Device Binary"), std::string::npos);
    EXPECT_TRUE(looks_like_spirv(r->spirv));
    // The scratch directory is gone: nothing left under the root.
    EXPECT_TRUE(std::filesystem::is_empty(dir()));
}

TEST_F(CompilerOcloc, CompilesForAPciId) {
    auto r = build("0x9a49");
    ASSERT_TRUE(r.ok()) << r.error().message << "\n" << r.error().log;
    EXPECT_EQ(r->format, AotFormat::device_elf);
    EXPECT_NE(r->log.find("tgllp"), std::string::npos) << r->log;
    EXPECT_TRUE(check_device_elf(r->binary).ok());
}

TEST_F(CompilerOcloc, CompilesAFatBinaryOfSeveralTargets) {
    auto r = build("tgllp,dg1");
    ASSERT_TRUE(r.ok()) << r.error().message << "\n" << r.error().log;
    EXPECT_EQ(r->format, AotFormat::fat_binary);
    auto members = check_fat_binary(r->binary);
    ASSERT_TRUE(members.ok()) << members.error().message;
    EXPECT_EQ(*members, 2u);
    EXPECT_TRUE(looks_like_spirv(r->spirv));
}

TEST_F(CompilerOcloc, MeteorLakeIdIsReportedUnsupported) {
    auto r = build("0x7d55");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, OclocErrc::unsupported_target) << r.error().log;
    EXPECT_EQ(r.error().exit_code, 223);
    EXPECT_NE(r.error().message.find("0x7d55"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("Cannot get HW Info"), std::string::npos) << r.error().message;
}

TEST_F(CompilerOcloc, UnknownTargetNameIsUnsupported) {
    auto r = build("tgllp,not-a-gpu");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, OclocErrc::unsupported_target) << r.error().log;
}

TEST_F(CompilerOcloc, TargetThatLooksLikeAnOptionIsRejected) {
    auto r = build("-q");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, OclocErrc::bad_target);
}

TEST_F(CompilerOcloc, BuildErrorComesBackWithTheLog) {
    auto r = build("tgllp", "__kernel void f(__global int* a) { a[0] = nope; }\n");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, OclocErrc::build_error) << r.error().message;
    EXPECT_NE(r.error().log.find("nope"), std::string::npos) << r.error().log;
}

TEST_F(CompilerOcloc, DeadlineKillsOcloc) {
    const auto start = Clock::now();
    auto r = build("tgllp:dg1", kKernel, 30ms);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, OclocErrc::timeout) << r.error().message;
    EXPECT_LT(Clock::now() - start, 1s);
}

TEST_F(CompilerOcloc, CrashOfOclocIsReportedWithTheSignal) {
    ::setenv("FAKE_OCLOC_MODE", "crash", 1);
    auto r =
        ocloc(KCACHE_TEST_FAKE_OCLOC).compile(AotRequest{kKernel, "", "tgllp"}, Clock::now() + 10s);
    ::unsetenv("FAKE_OCLOC_MODE");
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, OclocErrc::crash);
    EXPECT_EQ(r.error().signal, SIGSEGV);
}

TEST_F(CompilerOcloc, SuccessWithoutAnOutputFileIsNoOutput) {
    auto r =
        ocloc(KCACHE_TEST_FAKE_OCLOC).compile(AotRequest{kKernel, "", "tgllp"}, Clock::now() + 10s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, OclocErrc::no_output);
}

// ocloc runs in a scratch directory under the configured root; TMPDIR is the
// configuration's business (Config::tmpdir), not this layer's.
TEST_F(CompilerOcloc, RunsInAScratchDirectoryUnderTheGivenRoot) {
    const auto record = dir() / "cwd";
    const char* own_tmpdir = std::getenv("TMPDIR");
    const std::optional<std::string> saved =
        own_tmpdir ? std::optional<std::string>(own_tmpdir) : std::nullopt;
    ::setenv("FAKE_OCLOC_CWD_FILE", record.c_str(), 1);
    ::setenv("TMPDIR", "/nonexistent", 1);
    auto r =
        ocloc(KCACHE_TEST_FAKE_OCLOC).compile(AotRequest{kKernel, "", "tgllp"}, Clock::now() + 10s);
    ::unsetenv("FAKE_OCLOC_CWD_FILE");
    saved ? ::setenv("TMPDIR", saved->c_str(), 1) : ::unsetenv("TMPDIR");
    EXPECT_FALSE(r.ok());
    std::ifstream in(record);
    std::string ran_in;
    ASSERT_TRUE(std::getline(in, ran_in)) << "the stand-in ocloc did not run";
    EXPECT_EQ(ran_in.rfind((dir() / "kcache-ocloc-").string(), 0), 0u) << ran_in;
    EXPECT_FALSE(std::filesystem::exists(ran_in)) << "the scratch directory is left behind";
}

TEST_F(CompilerOcloc, MissingOclocIsSpawnFailed) {
    auto r =
        ocloc("/nonexistent/ocloc").compile(AotRequest{kKernel, "", "tgllp"}, Clock::now() + 10s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().kind, OclocErrc::spawn_failed) << r.error().message;
}

TEST_F(CompilerOcloc, IdentityIsVersionPlusLibraryDigests) {
    auto id = ocloc().identity(Clock::now() + 30s);
    ASSERT_TRUE(id.ok()) << id.error().message << "\n" << id.error().log;
    EXPECT_NE(id->ocloc_version.find('.'), std::string::npos) << id->ocloc_version;
    EXPECT_EQ(id->ocloc_version.find_first_not_of("0123456789."), std::string::npos)
        << id->ocloc_version;
    EXPECT_EQ(id->igc_sha256.size(), 64u);
    EXPECT_EQ(id->igc_sha256.find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_NE(id->igc_path.find("libigc"), std::string::npos);
    auto again = ocloc().identity(Clock::now() + 30s);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->to_string(), id->to_string());
}

TEST_F(CompilerOcloc, SanityChecksRejectDamagedBinaries) {
    auto single = build("tgllp");
    auto fat = build("tgllp,dg1");
    ASSERT_TRUE(single.ok() && fat.ok());
    std::string b = single->binary;
    EXPECT_FALSE(check_device_elf(b.substr(0, b.size() / 2)).ok());
    b[1] = 'X';
    EXPECT_FALSE(check_device_elf(b).ok());
    EXPECT_FALSE(check_device_elf(single->spirv).ok());
    const std::string& f = fat->binary;
    EXPECT_FALSE(check_fat_binary(f.substr(0, f.size() - 100)).ok());
    EXPECT_FALSE(check_fat_binary(single->binary).ok());
    auto empty = check_fat_binary("!<arch>\n");
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.error().code, CompilerErrc::bad_binary);
}

}  // namespace
}  // namespace kcache::compiler
