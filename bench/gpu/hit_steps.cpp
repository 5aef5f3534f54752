// gpu_bench long-lived, section 3b: a fresh process's first hit split into
// its steps, read from that process's own trace (KCACHE_TRACE: the request
// and its spans, docs/design.md "Metrics and trace"), beside the floor's
// first load in a fresh process. Each round runs three children: the hit
// untraced, the hit traced, the floor; "paired" is the median over rounds of
// untraced hit − floor within a round, and "trace" what tracing added.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hit_common.hpp"

namespace gpu_bench {
namespace {

constexpr int kRounds = 11;

// The spans of a trace file (µs, summed by name); the request's own under "request".
std::map<std::string, double> spans_in(const std::filesystem::path& file) {
    std::map<std::string, double> dur;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(",{", 0) != 0) {
            continue;
        }
        const auto e = nlohmann::json::parse(line.substr(1), nullptr, false);
        if (e.is_object() && e.value("ph", "") == "X") {
            dur[e.value("name", "")] += e.value("dur", 0.0);
        }
    }
    return dur;
}

// The steps as printed: a span (the plan and the two gates are steps of the
// ladder of their own), or the request less every step inside it ("rest":
// signature, rungs above, outcome).
struct Steps {
    double plan, gates, read, vouch, load, publish, rest;
};

Steps steps_of(std::map<std::string, double> s) {
    Steps t{};
    t.gates = s["canary gate"] + s["errata gate"];
    t.plan = s["plan"];
    t.read = s["tier read"];
    t.vouch = s["vouch"];
    t.load = s["load"];
    t.publish = s["publish"];
    t.rest = s["request"] - t.plan - t.gates - t.read - t.vouch - t.load - t.publish;
    return t;
}

}  // namespace

void first_hit_steps(const Device& d, const std::filesystem::path& dir) {
    std::printf(
        "\n3b. first hit in a fresh process, its steps from its trace, vs the floor's first read"
        " and load (medians of %d rounds, µs)\n",
        kRounds);
    std::printf("%-16s %7s %7s %7s %7s %7s %7s %7s %7s %8s %8s %8s %7s\n", "kernel", "open", "plan",
                "gates", "read", "vouch", "load", "publish", "rest", "hit", "floor", "paired",
                "trace");
    const auto trace = dir / "first-hit-trace.json";
    for (const auto& k : kcache::kernels::kernels()) {
        const Bytes bytes = stored_bytes(d, dir, k.name);
        if (bytes.empty()) {
            continue;
        }
        const auto file = bytes_file(dir, k.name, bytes);
        const std::string hit_args = "child-first-hit " + k.name + " '" + dir.string() + "'";
        (void)child_us(hit_args);  // the first child runs any canary still to run
        std::vector<double> open, hit, traced, floor, paired, cost;
        std::vector<double> col[7];
        for (int i = 0; i < kRounds; ++i) {
            const double h = child_us(hit_args);
            std::filesystem::remove(trace);
            ::setenv("KCACHE_TRACE", trace.c_str(), 1);
            double opened = -1;
            const double t = child_us(hit_args, &opened);
            ::unsetenv("KCACHE_TRACE");
            const double f = child_us("child-first-floor " + k.name + " '" + file.string() + "'");
            if (h < 0 || t < 0 || f < 0) {
                std::printf("%s: a child failed in round %d\n", k.name.c_str(), i);
                continue;
            }
            const Steps s = steps_of(spans_in(trace));
            const double v[7] = {s.plan, s.gates, s.read, s.vouch, s.load, s.publish, s.rest};
            for (int j = 0; j < 7; ++j) {
                col[j].push_back(v[j]);
            }
            open.push_back(opened);
            hit.push_back(h);
            floor.push_back(f);
            paired.push_back(h - f);
            cost.push_back(t - h);
        }
        std::printf("%-16s %7.1f", k.name.c_str(), median(open));
        for (auto& c : col) {
            std::printf(" %7.1f", median(c));
        }
        std::printf(" %8.1f %8.1f %+8.1f %+7.1f\n", median(hit), median(floor), median(paired),
                    median(cost));
    }
    std::filesystem::remove(trace);
}

}  // namespace gpu_bench
