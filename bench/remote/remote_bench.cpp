// The remote tier's benchmarks, side by side in one run on a loopback nginx
// and PoCL (README.md here has the figures and verdicts):
//   1. remote hit ÷ local store hit, per kernel;
//   2. a cold node with the remote vs a cold node that JITs everything;
//   3. a fleet: one warmer, then 16 processes with empty stores, counting compiles;
//   4. the server hanging: added lookup latency per process of one node.
// Usage: remote_bench [--variants N] [--reps N]   (children: remote_bench node …)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "bench_env.hpp"
#include "kcache/remote/remote.hpp"
#include "nginx_server.hpp"
#include "remote_roles.hpp"

namespace kcache::bench {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double us_since(Clock::time_point start) {
    return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// One program() on a fresh Cache over `config` (opening not timed); µs.
double timed_request(const Config& config, cl_context context, const std::string& kernel,
                     Rung expected) {
    Outcome o;
    auto cache = Cache::open(config, &o);
    if (!cache) {
        die("Cache::open: " + o.message);
    }
    const auto start = Clock::now();
    Program p = request(*cache, context, kernel);
    const double us = us_since(start);
    require_rung(p, expected, kernel.c_str());
    return us;
}

void hit_ratio(const std::string& url, int reps) {
    std::printf("\n1. remote hit vs local store hit (fresh Cache each, median of %d, us)\n", reps);
    std::printf("%-16s %10s %10s %8s\n", "kernel", "local", "remote", "ratio");
    auto context = new_context();
    for (const std::string& kernel : kernel_names()) {
        Config local = cache_config(fresh_dir("local"));
        {
            Config warm = local;
            use_remote(warm, url);
            auto cache = Cache::open(warm);
            require_rung(request(*cache, context.get(), kernel), Rung::jit, "warm");
            cache->drain(std::chrono::seconds(30));
        }
        std::vector<double> l, r;
        for (int i = 0; i < reps; ++i) {  // interleaved: the same load on both
            l.push_back(timed_request(local, context.get(), kernel, Rung::user_store));
            Config remote = cache_config(fresh_dir("remote"));
            use_remote(remote, url);
            r.push_back(timed_request(remote, context.get(), kernel, Rung::remote));
        }
        std::printf("%-16s %10.0f %10.0f %7.2fx\n", kernel.c_str(), median(l), median(r),
                    median(r) / median(l));
    }
}

NodeReport node(const std::string& dir, const std::string& url, std::size_t limit,
                const std::string& mode, int timeout_ms) {
    return parse_report(
        run_child({"node", dir, url, std::to_string(limit), mode, std::to_string(timeout_ms)}, {}));
}

// Starts `n` nodes at once and returns their reports.
std::vector<NodeReport> nodes_at_once(int n, const std::string& url, std::size_t limit,
                                      const std::string& mode, int timeout_ms,
                                      const std::string& shared_dir = "") {
    std::vector<FILE*> pipes;
    for (int i = 0; i < n; ++i) {
        const std::string dir = shared_dir.empty() ? fresh_dir("fleet").string() : shared_dir;
        const std::string cmd = "/proc/" + std::to_string(::getpid()) + "/exe node '" + dir +
                                "' '" + url + "' " + std::to_string(limit) + " " + mode + " " +
                                std::to_string(timeout_ms);
        pipes.push_back(::popen(cmd.c_str(), "r"));
    }
    std::vector<NodeReport> out;
    for (FILE* p : pipes) {
        char line[256] = {};
        const bool got = p && std::fgets(line, sizeof line, p) != nullptr;
        if (!p || ::pclose(p) != 0 || !got) {
            die("a fleet node failed");
        }
        out.push_back(parse_report(line));
    }
    return out;
}

void cold_and_fleet(const std::string& url, std::size_t limit) {
    std::printf("\n2. cold node: JIT everything vs the remote (%zu variants)\n", limit);
    const NodeReport jit = node(fresh_dir("cold-jit").string(), "none", limit, "blocking", 3000);
    const NodeReport warmer = node(fresh_dir("warmer").string(), url, limit, "blocking", 3000);
    const NodeReport cold = node(fresh_dir("cold-remote").string(), url, limit, "blocking", 3000);
    std::printf("cold JIT node      %10.1f ms  %llu compiles\n", jit.wall_us / 1e3,
                static_cast<unsigned long long>(jit.compiles));
    std::printf("warmer (uploads)   %10.1f ms  %llu compiles\n", warmer.wall_us / 1e3,
                static_cast<unsigned long long>(warmer.compiles));
    std::printf("cold remote node   %10.1f ms  %llu compiles, %llu remote hits\n",
                cold.wall_us / 1e3, static_cast<unsigned long long>(cold.compiles),
                static_cast<unsigned long long>(cold.remote_hits));
    std::printf("speed-up           %10.1fx\n", double(jit.wall_us) / double(cold.wall_us));

    std::printf("\n3. fleet: the warmer above, then 16 processes with empty stores at once\n");
    const auto start = Clock::now();
    auto fleet = nodes_at_once(16, url, limit, "blocking", 3000);
    const double wall_ms = us_since(start) / 1e3;
    std::uint64_t compiles = warmer.compiles, hits = 0;
    for (const auto& r : fleet) {
        compiles += r.compiles;
        hits += r.remote_hits;
    }
    std::printf(
        "variants %zu, compiles in total %llu (warmer %llu), fleet remote hits %llu, "
        "fleet wall %.0f ms (process start included)\n",
        limit, static_cast<unsigned long long>(compiles),
        static_cast<unsigned long long>(warmer.compiles), static_cast<unsigned long long>(hits),
        wall_ms);
}

void server_down(std::size_t limit) {
    const int timeout_ms = 1000;
    auto silent = test::SilentServer::start();
    if (!silent) {
        die("cannot open a listening socket");
    }
    std::printf(
        "\n4. server hanging (accepts, never answers), timeout %d ms, window 30 s:\n"
        "   fail_fast lookups of %zu variants, 8 processes of one node one after another\n",
        timeout_ms, limit);
    std::printf("%-8s %12s %12s %10s\n", "process", "no remote", "hanging", "added");
    const std::string node_dir = fresh_dir("down-node").string();
    const std::string base_dir = fresh_dir("down-base").string();
    for (int i = 0; i < 8; ++i) {
        const NodeReport base = node(base_dir, "none", limit, "fail_fast", timeout_ms);
        const NodeReport down = node(node_dir, silent->url(), limit, "fail_fast", timeout_ms);
        std::printf("%-8d %10.1f ms %10.1f ms %8.1f ms  (%llu timeouts)\n", i + 1,
                    base.wall_us / 1e3, down.wall_us / 1e3,
                    (double(down.wall_us) - double(base.wall_us)) / 1e3,
                    static_cast<unsigned long long>(down.timeouts));
    }
    const std::string together = fresh_dir("down-together").string();
    auto at_once = nodes_at_once(8, silent->url(), limit, "fail_fast", timeout_ms, together);
    std::uint64_t timeouts = 0;
    for (const auto& r : at_once) {
        timeouts += r.timeouts;
    }
    std::printf("8 processes of one node started at once: %llu timeouts in all\n",
                static_cast<unsigned long long>(timeouts));
}

}  // namespace
}  // namespace kcache::bench

int main(int argc, char** argv) {
    using namespace kcache::bench;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args[0] == "node") {
        return run_node(args);
    }
    std::size_t limit = 1000;
    int reps = 15;
    for (std::size_t i = 0; i + 1 < args.size(); i += 2) {
        if (args[i] == "--variants") {
            limit = std::stoul(args[i + 1]);
        } else if (args[i] == "--reps") {
            reps = std::stoi(args[i + 1]);
        } else {
            die("usage: remote_bench [--variants N] [--reps N]");
        }
    }
    use_private_dirs();
    make_bench_keys();
    limit = bench_variants(limit).size();
    auto server = kcache::test::NginxServer::start(fresh_dir("nginx"));
    if (!server) {
        die("nginx did not start");
    }
    std::printf("remote_bench: nginx %s on loopback, PoCL, %zu variants\n", server->url().c_str(),
                limit);
    hit_ratio(server->url(), reps);
    cold_and_fleet(server->url(), limit);
    server_down(limit);
    return 0;
}
