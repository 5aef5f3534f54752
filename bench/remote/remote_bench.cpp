// The remote tier's benchmarks, every backend side by side in one run on
// loopback servers and PoCL (README.md here has the figures and verdicts):
//   1. remote hit ÷ local store hit, per backend and kernel, load-checked
//      and from a trusted builder; 1b. the same at the storage level,
//      without OpenCL, and batches against one request at a time
//      (remote_fetch.cpp);
//   2. a cold node with the remote vs a cold node that JITs everything;
//   3. a fleet per backend: one warmer, then 16 processes with empty stores,
//      counting compiles;
//   4. a server of each kind hanging: timeouts per node per breaker window.
// The backends are the rows of remote_backends.cpp.
// Usage: remote_bench [--variants N] [--reps N] [--backends nginx,Apache,S3]
//                     [--sections 1,1b,1c,2,4] (default: all)
// (children: remote_bench node …, remote_bench hit …)

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "bench_env.hpp"
#include "kcache/remote/remote.hpp"
#include "nginx_server.hpp"
#include "remote_backends.hpp"
#include "remote_fetch.hpp"
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

// One program() of `kernel` in a new process (opening and the context not
// timed), on the store in `dir` with or without the remote of `env`; µs.
double timed_hit(const std::vector<std::string>& env, const std::filesystem::path& dir, bool remote,
                 const std::string& kernel) {
    const std::string out =
        run_child({"hit", dir.string(), remote ? "remote" : "none", kernel}, env);
    return std::stod(out.substr(out.find("us ") + 3));
}

// Per backend and kernel, each repetition in new processes (so the check of
// a binary built elsewhere is not remembered from an earlier repetition):
// a local store hit, a remote hit that is load-checked in kcache-verify,
// and a remote hit of an object signed by a trusted builder (no check).
void hit_ratio(const std::vector<Remote>& remotes, int reps) {
    std::printf(
        "\n1. remote hit vs local store hit, first request of a new process (median of %d, us):\n"
        "   check: the load check in kcache-verify; builder: signed by a trusted builder\n",
        reps);
    std::printf("%-14s %-16s %9s %9s %8s %9s %8s\n", "backend", "kernel", "local", "check", "ratio",
                "builder", "ratio");
    auto context = new_context();
    const std::string builders =
        "KCACHE_REMOTE_TRUSTED_BUILDERS=" + std::string(std::getenv("KCACHE_BENCH_KEYS")) + ".pub";
    for (const std::string& kernel : kernel_names()) {
        for (const Remote& r : remotes) {
            const Config local = node_config(fresh_dir("local"), UseRemote::no);
            {
                const ScopedEnv env(r.env);
                Config warm = node_config(local.dir, UseRemote::yes);
                auto cache = Cache::open(warm);
                require_rung(request(*cache, context.get(), kernel), Rung::jit, "warm");
                cache->drain(std::chrono::seconds(30));
            }
            std::vector<std::string> trusting = r.env;
            trusting.push_back(builders);
            std::vector<double> l, m, b;
            const std::size_t gets_before = r.server_gets_us ? r.server_gets_us().size() : 0;
            for (int i = 0; i < reps; ++i) {  // interleaved: the same load on all three
                l.push_back(timed_hit(r.env, local.dir, false, kernel));
                m.push_back(timed_hit(r.env, fresh_dir("remote"), true, kernel));
                b.push_back(timed_hit(trusting, fresh_dir("builder"), true, kernel));
            }
            std::printf("%-14s %-16s %9.0f %9.0f %7.2fx %9.0f %7.2fx", r.name.c_str(),
                        kernel.c_str(), median(l), median(m), median(m) / median(l), median(b),
                        median(b) / median(l));
            if (r.server_gets_us) {  // the GETs of both remote arms
                std::vector<double> gets = r.server_gets_us();
                gets.erase(gets.begin(), gets.begin() + static_cast<long>(gets_before));
                const double server = median(gets);
                std::printf(" %9.0f %7.2fx", server, (median(b) - server) / median(l));
            }
            std::printf("\n");
        }
    }
    if (std::any_of(remotes.begin(), remotes.end(),
                    [](const Remote& r) { return static_cast<bool>(r.server_gets_us); })) {
        std::printf(
            "   (S3: the server's own time per GET, from its log, then the builder hit less it ÷ "
            "local)\n");
    }
}

NodeReport node(const std::vector<std::string>& env, const std::string& dir, bool remote,
                std::size_t limit, const std::string& mode, int timeout_ms) {
    return parse_report(run_child({"node", dir, remote ? "remote" : "none", std::to_string(limit),
                                   mode, std::to_string(timeout_ms)},
                                  env));
}

// Starts `n` nodes of the remote of `env` at once and returns their reports.
std::vector<NodeReport> nodes_at_once(int n, const std::vector<std::string>& env, std::size_t limit,
                                      const std::string& mode, int timeout_ms,
                                      const std::string& shared_dir = "") {
    std::string settings = "env";
    for (const std::string& e : env) {
        settings += " '" + e + "'";
    }
    std::vector<FILE*> pipes;
    for (int i = 0; i < n; ++i) {
        const std::string dir = shared_dir.empty() ? fresh_dir("fleet").string() : shared_dir;
        const std::string cmd = settings + " /proc/" + std::to_string(::getpid()) + "/exe node '" +
                                dir + "' remote " + std::to_string(limit) + " " + mode + " " +
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

unsigned long long sum(const std::vector<NodeReport>& reports, std::uint64_t NodeReport::*field) {
    unsigned long long n = 0;
    for (const NodeReport& r : reports) {
        n += r.*field;
    }
    return n;
}

void cold_and_fleet(const std::vector<Remote>& remotes, std::size_t limit) {
    std::printf(
        "\n2. cold node: JIT everything vs the remote; 3. fleet: after the warmer, 16\n"
        "   processes with empty stores at once (%zu variants; wall of the requests,\n"
        "   fleet wall with process and PoCL start)\n",
        limit);
    const NodeReport jit = node({}, fresh_dir("cold-jit").string(), false, limit, "blocking", 3000);
    std::printf("cold JIT node, no remote: %.1f ms, %llu compiles\n", jit.wall_us / 1e3,
                static_cast<unsigned long long>(jit.compiles));
    std::printf("%-14s %12s %9s %12s %9s %8s %12s %9s %9s\n", "backend", "warmer", "compiles",
                "cold remote", "hits", "speedup", "fleet wall", "compiles", "hits");
    for (const Remote& r : remotes) {
        const NodeReport w =
            node(r.env, fresh_dir("warmer").string(), true, limit, "blocking", 3000);
        const NodeReport c =
            node(r.env, fresh_dir("cold-remote").string(), true, limit, "blocking", 3000);
        const auto start = Clock::now();
        const auto fleet = nodes_at_once(16, r.env, limit, "blocking", 3000);
        const double fleet_ms = us_since(start) / 1e3;
        std::printf("%-14s %9.1f ms %9llu %9.1f ms %9llu %7.1fx %9.0f ms %9llu %9llu\n",
                    r.name.c_str(), w.wall_us / 1e3, static_cast<unsigned long long>(w.compiles),
                    c.wall_us / 1e3, static_cast<unsigned long long>(c.remote_hits),
                    double(jit.wall_us) / double(c.wall_us), fleet_ms,
                    sum(fleet, &NodeReport::compiles), sum(fleet, &NodeReport::remote_hits));
    }
}

// Each backend's server hanging: 8 processes of one node one after another,
// then 8 of a fresh node at once; timeouts counted.
void server_down(const std::vector<BenchBackend>& backends, std::size_t limit) {
    const int timeout_ms = 1000;
    auto silent = test::SilentServer::start();
    if (!silent) {
        die("cannot open a listening socket");
    }
    const std::string host_port = silent->url().substr(silent->url().find("//") + 2);
    std::printf(
        "\n4. server hanging (accepts, never answers), timeout %d ms, window 30 s:\n"
        "   fail_fast lookups of %zu variants; timeouts and added wall per process\n",
        timeout_ms, limit);
    std::printf("%-14s %-44s %14s %10s\n", "backend", "8 processes of one node, one after another",
                "added (sum)", "8 at once");
    for (const BenchBackend& b : backends) {
        const std::vector<std::string> env = b.hanging(host_port);
        const std::string node_dir = fresh_dir("down-node").string();
        const std::string base_dir = fresh_dir("down-base").string();
        std::string timeouts;
        double added_ms = 0;
        for (int i = 0; i < 8; ++i) {
            const NodeReport base = node(env, base_dir, false, limit, "fail_fast", timeout_ms);
            const NodeReport down = node(env, node_dir, true, limit, "fail_fast", timeout_ms);
            timeouts += std::to_string(down.timeouts) + (i < 7 ? " " : "");
            added_ms += (double(down.wall_us) - double(base.wall_us)) / 1e3;
        }
        const auto at_once = nodes_at_once(8, env, limit, "fail_fast", timeout_ms,
                                           fresh_dir("down-together").string());
        std::printf("%-14s timeouts %-35s %11.0f ms %10llu\n", b.name, timeouts.c_str(), added_ms,
                    sum(at_once, &NodeReport::timeouts));
    }
}

}  // namespace
}  // namespace kcache::bench

int main(int argc, char** argv) {
    using namespace kcache::bench;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args[0] == "node") {
        return run_node(args);
    }
    if (!args.empty() && args[0] == "hit") {
        return run_hit(args);
    }
    std::size_t limit = 1000;
    int reps = 15;
    std::string only;
    std::string sections = ",1,1b,1c,2,3,4,";  // 2 and 3 run together
    const char* usage =
        "usage: remote_bench [--variants N] [--reps N] [--backends nginx,Apache,S3,Redis,...] "
        "[--sections 1,1b,1c,2,4]";
    for (std::size_t i = 0; i < args.size(); i += 2) {
        if (args[i] == "--help" || args[i] == "-h") {
            std::puts(usage);
            return 0;
        }
        if (i + 1 == args.size()) {
            die(args[i] + " needs a value; " + usage);
        }
        const std::string& value = args[i + 1];
        const bool number = !value.empty() &&
                            value.find_first_not_of("0123456789") == std::string::npos &&
                            value.size() < 9;
        if ((args[i] == "--variants" || args[i] == "--reps") &&
            (!number || std::stoi(value) == 0)) {
            die(args[i] + " takes a whole number above 0, not '" + value + "'");
        }
        if (args[i] == "--variants") {
            limit = std::stoul(value);
        } else if (args[i] == "--reps") {
            reps = std::stoi(value);
        } else if (args[i] == "--backends") {
            only = value;
        } else if (args[i] == "--sections") {
            sections = "," + value + ",";
        } else {
            die("unknown argument '" + args[i] + "'; " + usage);
        }
    }
    use_private_dirs();
    make_bench_keys();
    limit = bench_variants(limit).size();
    const std::vector<BenchBackend> backends = bench_backends(only);
    std::vector<Remote> remotes;
    for (const BenchBackend& b : backends) {
        std::string tag = b.name;  // a directory name: no spaces
        std::replace_if(
            tag.begin(), tag.end(), [](char c) { return !std::isalnum(c); }, '-');
        auto r = b.start(fresh_dir(tag));
        if (!r) {
            die(std::string(b.name) + " did not start");
        }
        remotes.push_back(std::move(*r));
    }
    std::printf("remote_bench: %zu backends on loopback, PoCL, %zu variants\n", remotes.size(),
                limit);
    auto wanted = [&](const char* section) {
        return sections.find("," + std::string(section) + ",") != std::string::npos;
    };
    if (wanted("1")) {
        hit_ratio(remotes, reps);
    }
    if (wanted("1b")) {
        storage_level(remotes, reps);
    }
    if (wanted("1c")) {
        batches(remotes, reps);
    }
    if (wanted("2") || wanted("3")) {
        cold_and_fleet(remotes, limit);
    }
    if (wanted("4")) {
        server_down(backends, limit);
    }
    return 0;
}
