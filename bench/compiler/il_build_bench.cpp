// What building a stored SPIR-V module costs against building the source it
// was made from, per registry kernel (default variant), in one pooled
// kcache-jit helper: the driver's front end is skipped, its back end is not.
// Needs a driver that loads IL: on this VM the SPIR-V PoCL of
// scripts/il-driver.sh, offered to the loader alone:
//
//   OCL_ICD_VENDORS=$(scripts/il-driver.sh) build/bench/compiler/il_build_bench [REPS]
//
// REPS rounds (default 7), each building every kernel once from source and
// once from its SPIR-V, alternating which goes first, with a fresh
// -DKC_BENCH_SALT option each time so that no driver cache answers. Prints
// the medians of the helper's build phase (create + clBuildProgram + entry
// points) and their ratio, IL ÷ source.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "il_support.hpp"
#include "jit_support.hpp"
#include "kcache/kernels/registry.hpp"
#include "temp_path.hpp"

namespace {

using namespace kcache;
using namespace std::chrono_literals;

double middle(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// The helper's build phase of `q` in ms; exits the program when it fails.
double build_ms(compiler::JitCompiler& jit, const compiler::JitRequest& q) {
    auto r = jit.compile(q, compiler::Clock::now() + 120s);
    if (!r) {
        std::fprintf(stderr, "build failed: %s\n%s\n", r.error().message.c_str(),
                     r.error().log.c_str());
        std::exit(1);
    }
    return static_cast<double>(r->timings.helper.build_us) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
    const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
    if (const std::string il = test::test_device_il_version();
        il.find("SPIR-V") == std::string::npos) {
        std::fprintf(stderr,
                     "the test device loads no SPIR-V (CL_DEVICE_IL_VERSION \"%s\"; "
                     "OCL_ICD_VENDORS: see the top)\n",
                     il.c_str());
        return 2;
    }
    const auto cache_dir = test::make_temp_dir("il-bench");
    auto jit = test::pocl_jit(cache_dir.string());
    std::printf("%-12s %10s %10s %8s\n", "kernel", "source ms", "IL ms", "IL/src");
    int salt = 0;
    for (const kernels::KernelInfo& k : kernels::kernels()) {
        auto variant = kernels::make_variant(k.name);
        if (!variant) {
            continue;
        }
        auto r = kernels::render(*variant);
        if (!r) {
            continue;
        }
        compiler::JitRequest q = test::axpb_request(0);
        q.source = r->source;
        q.entry_points = r->entry_points;
        const std::string il = test::spirv_of(r->source, {}, r->options);
        std::vector<double> source_ms, il_ms;
        for (int i = 0; i < reps; ++i) {
            for (int order = 0; order < 2; ++order) {
                const bool from_il = (order == 0) == (i % 2 == 0);
                q.options = r->options + " -DKC_BENCH_SALT=" + std::to_string(++salt);
                q.il = from_il ? il : std::string();
                (from_il ? il_ms : source_ms).push_back(build_ms(jit, q));
            }
        }
        const double s = middle(source_ms), l = middle(il_ms);
        std::printf("%-12s %10.1f %10.1f %8.2f\n", k.name.c_str(), s, l, l / s);
    }
    std::error_code ec;
    std::filesystem::remove_all(cache_dir, ec);
    return 0;
}
