// Every rendered variant is valid OpenCL C for a second, real compiler: Intel's
// offline compiler ocloc (the one kcache prebuilds AOT binaries with). This is
// also where the variants that need an extension PoCL lacks (cl_khr_fp16) are
// compiled for real, for a target that has it.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kcache/kernels/registry.hpp"
#include "temp_dir.hpp"

namespace kcache::kernels {
namespace {

// Tiger Lake (Gen12LP): supports cl_khr_fp16 and every core feature the kernels use.
constexpr const char* kTarget = "tgllp";

class KernelsOcloc : public test::TempDirTest {};

std::string slurp(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST_F(KernelsOcloc, EveryVariantCompilesForAnIntelTarget) {
    ASSERT_EQ(std::system("command -v ocloc >/dev/null 2>&1"), 0) << "ocloc is not installed";
    int index = 0;
    bool saw_extension_variant = false;
    for (const Variant& v : all_variants()) {
        auto r = render(v);
        ASSERT_TRUE(r.ok()) << v.id();
        saw_extension_variant |= !r->required_extensions.empty();
        const auto src = dir() / ("v" + std::to_string(index++) + ".cl");
        std::ofstream(src, std::ios::binary) << r->source;
        const auto out = dir() / "out";
        const auto log = dir() / "log.txt";
        const std::string cmd = "ocloc compile -q -file '" + src.string() + "' -device " + kTarget +
                                " -options '" + r->options + "' -out_dir '" + out.string() +
                                "' >'" + log.string() + "' 2>&1";
        EXPECT_EQ(std::system(cmd.c_str()), 0) << v.id() << "\n" << slurp(log);
    }
    EXPECT_TRUE(saw_extension_variant);
}

}  // namespace
}  // namespace kcache::kernels
