// hashcat under the layer (label layer): a real application that builds its
// kernels with -I, many #includes and separate compilation
// (clCompileProgram, then clLinkProgram). It cracks the MD5 of a random
// three-letter word twice, its own kernel cache emptied between the runs:
// the first run's compiles are compiled by kcache, the second's answered
// from the store, and both find the word.

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "layer_fixture.hpp"

namespace kcache::test {
namespace {

using LayerHashcat = LayerTest;

std::string md5_hex(const std::string& word) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    EVP_Digest(word.data(), word.size(), digest, &size, EVP_md5(), nullptr);
    std::string hex;
    for (unsigned int i = 0; i < size; ++i) {
        constexpr char kDigits[] = "0123456789abcdef";
        hex += kDigits[digest[i] >> 4];
        hex += kDigits[digest[i] & 15];
    }
    return hex;
}

std::string random_word() {
    std::mt19937 random(std::random_device{}());
    std::uniform_int_distribution<int> letter('a', 'z');
    return {static_cast<char>(letter(random)), static_cast<char>(letter(random)),
            static_cast<char>(letter(random))};
}

std::string text_of(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

long count_matching(const std::vector<std::string>& lines, const std::string& start,
                    const std::string& part) {
    return std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
        return l.rfind(start, 0) == 0 && l.find(part) != std::string::npos;
    });
}

TEST_F(LayerHashcat, ItsCompilesAreCompiledByKcacheThenAnsweredFromTheStoreAndItCracksTheSame) {
    const std::string word = random_word();
    const std::filesystem::path found = dir() / "found.txt";
    const std::vector<std::string> args = {"-m",
                                           "0",
                                           "-a",
                                           "3",
                                           "-D",
                                           "1",
                                           "--potfile-disable",
                                           "--backend-ignore-cuda",
                                           "--backend-ignore-hip",
                                           "--hwmon-disable",
                                           "--self-test-disable",
                                           "--quiet",
                                           "-o",
                                           found.string(),
                                           "--outfile-format=2",
                                           md5_hex(word),
                                           "?l?l?l"};
    // hashcat keeps its compiled kernels in $XDG_CACHE_HOME/hashcat/kernels
    // (the fixture's xdg/) and its session in $XDG_DATA_HOME; the loader
    // offers it PoCL alone.
    const std::vector<std::string> env = {"HOME=" + dir().string(),
                                          "XDG_DATA_HOME=" + (dir() / "data").string(),
                                          "OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd"};
    const std::filesystem::path its_cache = dir() / "xdg" / "hashcat" / "kernels";

    const auto first = run(With::layer, "/usr/bin/hashcat", args, env);
    ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
    EXPECT_EQ(text_of(found), word + "\n");
    ASSERT_TRUE(std::filesystem::exists(its_cache)) << "hashcat's kernel cache is elsewhere";
    std::filesystem::remove_all(its_cache);
    std::filesystem::remove(found);
    const auto second = run(With::layer, "/usr/bin/hashcat", args, env);
    ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
    EXPECT_EQ(text_of(found), word + "\n");

    const auto one = trace_lines(first.err);
    const auto two = trace_lines(second.err);
    const long compiled = count_matching(one, "JIT jit ", "clCompileProgram");
    EXPECT_GE(compiled, 1) << first.err;
    EXPECT_EQ(static_cast<long>(one.size()), compiled) << first.err;
    EXPECT_EQ(count_matching(two, "HIT user_store ", "clCompileProgram"), compiled) << second.err;
    EXPECT_EQ(two.size(), one.size()) << second.err;
}

}  // namespace
}  // namespace kcache::test
