// kcache capture without a device: traces written as processes write them
// (one event per line after "["; a last line cut short) become a manifest of
// registry variants and own kernels with their devices; each source is
// written once beside it, named by its digest; what cannot be captured is
// said, with its exit code.

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_runner.hpp"
#include "kcache/common/sha256.hpp"

namespace kcache::test {
namespace {

using nlohmann::json;

const std::string kSource = "kernel void mine(global int* x) { x[get_global_id(0)] = 7; }\n";

json request(const std::string& status, const std::string& device, json asked) {
    json args{{"key", "0123456789abcdef"}, {"rung", "jit"},    {"status", status},
              {"result", "JIT"},           {"device", device}, {"mode", "blocking"},
              {"misses", json::array()}};
    args.update(asked);
    return {{"name", "request"}, {"cat", "request"}, {"ph", "X"}, {"ts", 1.0},
            {"dur", 2.0},        {"pid", 10},        {"tid", 11}, {"args", args}};
}

class CliCapture : public CliTest {
  protected:
    std::filesystem::path trace(const std::string& name, const std::vector<json>& events,
                                const std::string& tail = "") {
        const auto path = dir() / name;
        std::ofstream out(path);
        out << "[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,\"args\":{}}\n";
        for (const json& e : events) {
            out << "," << e.dump() << "\n";
        }
        out << tail;
        return path;
    }
    json own(const std::string& name) {
        return {{"name", name},
                {"source_sha256", sha256_hex(kSource)},
                {"options", "-cl-mad-enable"},
                {"entry_points", {"mine"}}};
    }
};

TEST_F(CliCapture, TracesBecomeAManifestWithEachSourceWrittenOnce) {
    const json source{
        {"name", "source"}, {"cat", "source"},
        {"ph", "i"},        {"s", "t"},
        {"ts", 0.5},        {"pid", 10},
        {"tid", 11},        {"args", {{"sha256", sha256_hex(kSource)}, {"text", kSource}}}};
    const auto first =
        trace("a.json",
              {request("ok", "cpu A", {{"kernel", "dot"}, {"params", {{"dtype", "f32"}}}}), source,
               request("ok", "cpu A", own("mine")),
               request("unknown_kernel", "cpu A", {{"kernel", "nope"}})},
              ",{\"name\":\"requ");  // cut short by a full disk
    const auto second =
        trace("b.json",
              {request("ok", "gpu B", own("mine")),
               request("not_ready", "gpu B", {{"kernel", "dot"}, {"params", {{"dtype", "f32"}}}})});
    const auto manifest = dir() / "out" / "manifest.json";
    std::filesystem::create_directories(manifest.parent_path());
    const CliRun r = kcache({"capture", "--from-trace", first.string(), second.string(), "--output",
                             manifest.string()});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("1 registry variants, 1 own kernels (5 requests, 1 not replayable)"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.err.find("1 trace lines did not parse"), std::string::npos) << r.err;
    std::ifstream in(manifest);
    const json doc = json::parse(in);
    ASSERT_EQ(doc["registry"].size(), 1u) << doc.dump(2);
    EXPECT_EQ(doc["registry"][0]["kernel"], "dot");
    EXPECT_EQ(doc["registry"][0]["params"]["dtype"], "f32");
    EXPECT_EQ(doc["registry"][0]["devices"], json({"cpu A", "gpu B"}));
    ASSERT_EQ(doc["kernels"].size(), 1u);
    EXPECT_EQ(doc["kernels"][0]["options"], "-cl-mad-enable");
    EXPECT_EQ(doc["kernels"][0]["devices"], json({"cpu A", "gpu B"}));
    const std::string rel = "sources/" + sha256_hex(kSource) + ".cl";
    EXPECT_EQ(doc["kernels"][0]["sources"][0], rel);
    std::ifstream src(manifest.parent_path() / rel);
    std::stringstream text;
    text << src.rdbuf();
    EXPECT_EQ(text.str(), kSource);
    // A second capture beside it shares the source file.
    const CliRun again = kcache({"capture", "--from-trace", first.string(), "--output",
                                 (manifest.parent_path() / "other.json").string()});
    ASSERT_EQ(again.code, 0) << again.err;
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e :
         std::filesystem::directory_iterator(manifest.parent_path() / "sources")) {
        ++files;
    }
    EXPECT_EQ(files, 1u);
}

TEST_F(CliCapture, AnOwnKernelWhoseSourceNoTraceHoldsIsLeftOutAndSaid) {
    const auto t = trace("t.json", {request("ok", "cpu A", own("lost")),
                                    request("ok", "cpu A", {{"kernel", "dot"}})});
    const auto manifest = dir() / "m.json";
    const CliRun r = kcache({"capture", "--from-trace", t.string(), "--output", manifest.string()});
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("own kernel lost"), std::string::npos) << r.err;
    std::ifstream in(manifest);
    EXPECT_EQ(json::parse(in)["kernels"].size(), 0u);
}

TEST_F(CliCapture, MissingTracesAndEmptyCapturesAreErrors) {
    const auto manifest = dir() / "m.json";
    EXPECT_EQ(kcache({"capture", "--from-trace", (dir() / "none.json").string(), "--output",
                      manifest.string()})
                  .code,
              3);
    const auto empty = trace("e.json", {request("build_error", "cpu A", own("bad"))});
    EXPECT_EQ(
        kcache({"capture", "--from-trace", empty.string(), "--output", manifest.string()}).code, 1);
    EXPECT_FALSE(std::filesystem::exists(manifest));
    EXPECT_EQ(kcache({"capture", "--output", manifest.string()}).code, 2);
}

}  // namespace
}  // namespace kcache::test
