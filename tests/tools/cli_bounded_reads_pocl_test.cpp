// `warm` (the runtime's lookup ladder on PoCL) with a FIFO as a trusted key
// and as a pack's signature: both are refused at once, named in a warning,
// and the pack still answers (signed packs are not required).

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "cli_runner.hpp"

namespace kcache::test {
namespace {

namespace fs = std::filesystem;

class CliBoundedReadsDevice : public CliTest {};

TEST_F(CliBoundedReadsDevice, WarmPastTheUserStoreNeverWaitsOnAFifo) {
    cli_deadline_ = std::chrono::seconds(120);
    const std::vector<std::string> warm = {"warm", "--kernels", "dot", "--dtypes", "f32"};
    const std::vector<std::string> env = {"XDG_CONFIG_HOME=" + (dir() / "config").string()};
    ASSERT_EQ(kcache(warm, env).code, 0);
    const fs::path pack = dir() / "p.kcpack";
    ASSERT_EQ(kcache({"export", pack.string()}, env).code, 0);
    fs::remove_all(store_dir());
    const fs::path trusted = dir() / "config" / "kcache" / "trusted.d";
    fs::create_directories(trusted);
    ASSERT_EQ(::mkfifo((trusted / "x.pub").c_str(), 0600), 0);
    ASSERT_EQ(::mkfifo((pack.string() + ".minisig").c_str(), 0600), 0);

    cli_deadline_ = std::chrono::seconds(30);
    std::vector<std::string> with_pack = env;
    with_pack.push_back("KCACHE_PACKS=" + pack.string());
    const CliRun r = kcache(warm, with_pack);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("0 built, 2 already cached"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("x.pub: not a regular file (a FIFO)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("p.kcpack.minisig: not a regular file (a FIFO)"), std::string::npos)
        << r.err;
}

}  // namespace
}  // namespace kcache::test
