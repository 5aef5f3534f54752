#pragma once
// The child processes of the remote benchmark: a node that asks for a set of
// variants and reports what it cost.

#include <string>
#include <vector>

#include "kcache/kernels/registry.hpp"
#include "kcache/service/service_api.hpp"

namespace kcache::bench {

// The variants the benchmark uses: every registry variant PoCL supports, or
// the first `limit` of them.
std::vector<kernels::Variant> bench_variants(std::size_t limit);

// What a node reports on its one stdout line:
// "compiles N wall_us W remote_hits H timeouts T".
struct NodeReport {
    std::uint64_t compiles = 0, wall_us = 0, remote_hits = 0, timeouts = 0;
};
NodeReport parse_report(const std::string& line);

// Makes the key pair every node of this run signs with and trusts, and
// names it in KCACHE_BENCH_KEYS for the child processes, and an empty
// config file (KCACHE_CONFIG) so that no user's file is read; once, in the parent.
void make_bench_keys();
// The configuration of a node whose store is `dir`: the benchmark's (see
// cache_config) plus, with `remote`, the remote tier of the KCACHE_REMOTE*
// and AWS_* settings in this process's environment (remote_backends.hpp),
// signing uploads with the run's key and trusting it (signed objects are
// required by default, as in a fleet).
enum class UseRemote { no, yes };
Config node_config(const std::filesystem::path& dir, UseRemote remote);

// Child entry: argv = hit DIR remote|none KERNEL: one request of KERNEL's
// default variant on the store in DIR (with the remote of the environment);
// prints "us N", its time. The rung must be the user store's, or with the
// remote the remote's.
int run_hit(const std::vector<std::string>& args);

// Child entry: argv = node DIR remote|none LIMIT MODE(blocking|fail_fast)
// TIMEOUT_MS, the remote's settings in the environment.
int run_node(const std::vector<std::string>& args);

}  // namespace kcache::bench
