// Text from outside that a command shows while it works on a device: a
// manifest's kernel names in warm's progress lines (stderr) and in the
// summary of an item that does not build (stdout).

#include <gtest/gtest.h>

#include <fstream>

#include "cli_runner.hpp"

namespace kcache::test {
namespace {

class CliContractDevice : public CliTest {};

TEST_F(CliContractDevice, WarmEscapesAManifestsNamesInProgressAndSummary) {
    std::ofstream(dir() / "k.cl") << "__kernel void k(__global float* x) { x[0] += 1.0f; }\n";
    std::ofstream(dir() / "bad.cl") << "__kernel void b(__global float* x) { x[0] = \x1b[2J; }\n";
    std::ofstream(dir() / "m.json")
        << R"({"kernels": [{"name": "k\u001b[31mred\u0007", "sources": ["k.cl"]},)"
        << R"( {"name": "bad\u001b]0;t\u0007", "sources": ["bad.cl"]}]})";
    const CliRun r = kcache({"warm", "--manifest", (dir() / "m.json").string()});
    EXPECT_EQ(r.code, 1) << r.out << r.err;  // the second item does not build
    for (const std::string& text : {r.out, r.err}) {
        for (unsigned char c : text) {
            EXPECT_FALSE((c < 0x20 && c != '\n') || c == 0x7f) << text;
        }
    }
    EXPECT_NE(r.err.find("k\\x1b[31mred\\x07"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("bad\\x1b]0;t\\x07"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace kcache::test
