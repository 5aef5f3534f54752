// Programs that include files, under the layer (label layer): a pyopencl
// application builds `main.cl` with -I; the layer keys the build by every
// file its includes may name, so a second process is a store hit, and an
// edited header, or one that appears earlier on the search path, is a
// miss with the new answer. What the layer cannot follow is built by the
// driver, with the reason in the trace line; a hanging compile is stopped.

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "jit_support.hpp"
#include "layer_fixture.hpp"

namespace kcache::test {
namespace {

constexpr const char* kPython = "/usr/bin/python3";
const std::string kApp = KCACHE_TEST_LAYER_SOURCE_DIR "/pyopencl_includes.py";
const std::vector<std::string> kEnv = {"PYOPENCL_NO_CACHE=1"};

class LayerIncludes : public LayerTest {
  protected:
    void write(const std::string& name, const std::string& text) {
        std::filesystem::create_directories((dir() / name).parent_path());
        std::ofstream(dir() / name) << text;
    }
    // Builds main.cl with `options` under the layer (or the driver).
    compiler::RunResult app(const std::vector<std::string>& options, With with = With::layer,
                            std::vector<std::string> env = kEnv) {
        std::vector<std::string> args = {kApp, (dir() / "main.cl").string()};
        args.insert(args.end(), options.begin(), options.end());
        auto r = run(with, kPython, args, env);
        EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
        return r;
    }
    // Builds main.cl with `options` under the layer, expecting the kernel to
    // write `value` and the trace line to start with `prefix`.
    void answers(const std::vector<std::string>& options, const std::string& value,
                 const std::string& prefix) {
        SCOPED_TRACE("expected value " + value + " and a trace line " + prefix);
        const auto r = app(options);
        EXPECT_EQ(value_of(r.out, "value"), value) << r.out;
        traced(r, prefix);
    }
    // The one trace line of a run, checked to start with `prefix`.
    static std::string traced(const compiler::RunResult& r, const std::string& prefix) {
        const auto lines = trace_lines(r.err);
        EXPECT_EQ(lines.size(), 1u) << r.err;
        const std::string line = lines.empty() ? "" : lines.front();
        EXPECT_EQ(line.rfind(prefix, 0), 0u) << "expected " << prefix << ":\n" << r.err;
        return line;
    }
};

constexpr const char* kMain = "#include \"hdr.h\"\nkernel void k(global int* a) { a[0] = V; }\n";

TEST_F(LayerIncludes, ASecondRunIsAHitAndAnEditedHeaderIsAMissWithTheNewAnswer) {
    write("main.cl", kMain);
    write("inc/hdr.h", "#include \"inner.h\"\n");
    write("inc/inner.h", "#define V 7\n");
    const auto driver = app({"-I", "inc"}, With::driver);
    EXPECT_EQ(value_of(driver.out, "value"), "7") << driver.out << driver.err;
    answers({"-I", "inc"}, "7", "JIT jit ");
    answers({"-I", "inc"}, "7", "HIT user_store ");

    write("inc/inner.h", "#define V 8\n");  // a header two levels down
    answers({"-I", "inc"}, "8", "JIT jit ");
    answers({"-I", "inc"}, "8", "HIT user_store ");

    // The working directory comes before -I: a header that appears there
    // is what the compiler reads, so it is a miss.
    write("hdr.h", "#define V 9\n");
    answers({"-I", "inc"}, "9", "JIT jit ");
    EXPECT_TRUE(std::filesystem::is_directory(store_dir() / "layer-includes"));
}

TEST_F(LayerIncludes, AnIncludeMadeByTheOptionsMacrosIsFollowedAsHashcatWritesThem) {
    write("main.cl",
          "#include M2S(INCLUDE_PATH/hdr.h)\nkernel void k(global int* a) { a[0] = V; }\n");
    write("inc/hdr.h", "#define V 5\n");
    const std::vector<std::string> options = {"-D", "INCLUDE_PATH=" + (dir() / "inc").string(),
                                              "-D", "XM2S(x)=#x",
                                              "-D", "M2S(x)=XM2S(x)"};
    answers(options, "5", "JIT jit ");
    answers(options, "5", "HIT user_store ");
    write("inc/hdr.h", "#define V 6\n");
    answers(options, "6", "JIT jit ");
}

TEST_F(LayerIncludes, WhatTheLayerCannotFollowIsTheDriversBuildWithTheReason) {
    write("inc/hdr.h", "#define V 3\n");
    // A header that cannot be read where the compiler looks first (a
    // symbolic link to itself): the layer does not guess, and the build
    // gets the driver's answer (PoCL stops at it too).
    std::filesystem::create_symlink("hdr.h", dir() / "hdr.h");
    write("main.cl", kMain);
    const auto refused = app({"-I", "inc"}, With::driver);
    auto r = app({"-I", "inc"});
    EXPECT_EQ(value_of(r.out, "build"), value_of(refused.out, "build")) << r.out << refused.out;
    EXPECT_EQ(value_of(r.out, "value"), value_of(refused.out, "value")) << r.out;
    EXPECT_NE(traced(r, "PASS driver ").find("hdr.h cannot be read"), std::string::npos);
    std::filesystem::remove(dir() / "hdr.h");

    write("main.cl",
          "#define H \"hdr.h\"\n#include H\nkernel void k(global int* a) { a[0] = V; }\n");
    r = app({"-I", "inc"});
    EXPECT_EQ(value_of(r.out, "value"), "3") << r.out;
    EXPECT_NE(traced(r, "PASS driver ").find("an #include the layer cannot follow"),
              std::string::npos);

    // A file the options include before the source: the driver's build.
    write("main.cl", "kernel void k(global int* a) { a[0] = V; }\n");
    for (const char* option : {"-include", "-imacros"}) {
        const std::vector<std::string> included = {option, (dir() / "inc/hdr.h").string()};
        const auto by_driver = app(included, With::driver);
        r = app(included);
        EXPECT_EQ(value_of(r.out, "value"), value_of(by_driver.out, "value")) << r.out;
        EXPECT_NE(traced(r, "PASS driver ").find("the options include files"), std::string::npos)
            << option;
    }

    // Found in no directory, where every directory is known (PoCL searches
    // none by default): found nowhere, so keyed as absent. The build fails as
    // the driver's does (kcache-jit's compile under the watchdog fails, and
    // the driver's own build gives the application its log), and the failure
    // is recorded for the next run.
    write("main.cl", "#include <nowhere.h>\nkernel void k(global int* a) { a[0] = 1; }\n");
    const auto driver = app({"-I", "inc"}, With::driver);
    r = app({"-I", "inc"});
    EXPECT_EQ(value_of(r.out, "build"), "failed") << r.out;
    EXPECT_EQ(value_of(r.out, "build"), value_of(driver.out, "build"));
    EXPECT_NE(traced(r, "PASS jit ").find(" build_error"), std::string::npos);
    EXPECT_NE(traced(app({"-I", "inc"}), "PASS failure_record ").find(" build_error"),
              std::string::npos);
}

TEST_F(LayerIncludes, OptionsTheLayerDoesNotSplitAreKeyedUnlessTheyNameAnIncludedFile) {
    // A quote holding a single quote: options the layer does not split into
    // words. Without -include or -imacros anywhere in them they include no
    // file, so a source that includes none is keyed and cached.
    write("main.cl", "kernel void k(global int* a) { a[0] = V; }\n");
    const std::vector<std::string> quoted = {"-DV=4", "-DW=\"it's\""};
    answers(quoted, "4", "JIT jit ");
    answers(quoted, "4", "HIT user_store ");

    // With a file included before the source in them: the driver's build
    // and answer (PoCL refuses these options).
    write("inc/hdr.h", "#define V 5\n");
    const std::vector<std::string> included = {"-DW=\"it's\"", "-include",
                                               (dir() / "inc/hdr.h").string()};
    const auto by_driver = app(included, With::driver);
    const auto r = app(included);
    EXPECT_EQ(value_of(r.out, "build"), value_of(by_driver.out, "build")) << r.out;
    EXPECT_EQ(value_of(r.out, "value"), value_of(by_driver.out, "value")) << r.out;
    EXPECT_NE(traced(r, "PASS driver ").find("the options include files"), std::string::npos);
}

TEST_F(LayerIncludes, AHangingCompileOfAnIncludedFileIsStoppedAtTheDeadline) {
    write("inc/slow.h", nested_macro_kernel(17));
    write("main.cl", "#include \"slow.h\"\n");
    std::vector<std::string> env = kEnv;
    env.push_back("KCACHE_JIT_TIMEOUT_MS=2000");
    const auto first = app({"-I", "inc"}, With::layer, env);
    EXPECT_EQ(value_of(first.out, "build"), "failed") << first.out;
    EXPECT_LE(std::stoi("0" + value_of(first.out, "build_ms")), 4000) << first.out;
    EXPECT_NE(value_of(first.out, "log").find("stopped at its deadline of 2000 ms"),
              std::string::npos)
        << first.out;
    traced(first, "FAIL jit ");
    const auto second = app({"-I", "inc"}, With::layer, env);
    EXPECT_EQ(value_of(second.out, "build"), "failed") << second.out;
    traced(second, "FAIL failure_record ");
}

}  // namespace
}  // namespace kcache::test
