#include "remote_roles.hpp"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "bench_env.hpp"
#include "kcache/sign/signature.hpp"

namespace kcache::bench {

std::vector<kernels::Variant> bench_variants(std::size_t limit) {
    cl_device_id d = pocl_device();
    std::size_t size = 0;
    clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, nullptr, &size);
    std::string text(size, '\0');
    clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, size, text.data(), nullptr);
    std::vector<std::string> extensions;
    std::istringstream words(text);
    for (std::string w; words >> w;) {
        extensions.push_back(w);
    }
    std::vector<kernels::Variant> out;
    for (const auto& v : kernels::all_variants()) {
        if (out.size() < limit && kernels::check_support(v, extensions)) {
            out.push_back(v);
        }
    }
    return out;
}

NodeReport parse_report(const std::string& line) {
    NodeReport r;
    std::istringstream in(line);
    std::string word;
    while (in >> word) {
        std::uint64_t* field = word == "compiles"      ? &r.compiles
                               : word == "wall_us"     ? &r.wall_us
                               : word == "remote_hits" ? &r.remote_hits
                               : word == "timeouts"    ? &r.timeouts
                                                       : nullptr;
        if (field) {
            in >> *field;
        }
    }
    return r;
}

void make_bench_keys() {
    const auto base = (fresh_dir("keys") / "bench").string();
    auto key = store::generate_key();
    if (!key ||
        !store::write_text_file(base + ".key", store::format_secret_key(*key), 0600,
                                store::Replace::no) ||
        !store::write_text_file(base + ".pub", store::format_public_key(key->public_key()), 0644,
                                store::Replace::no)) {
        die("cannot make the benchmark's signing key");
    }
    ::setenv("KCACHE_BENCH_KEYS", base.c_str(), 1);
    const auto config = fresh_dir("config") / "config";
    std::ofstream(config) << "# empty: the benchmark's settings come from the environment\n";
    ::setenv("KCACHE_CONFIG", config.c_str(), 1);
    // No driver canary: this benchmark measures the remote tier (the
    // canary's cost is bench/README.md's).
    ::setenv("KCACHE_CANARY", "off", 1);
}

Config node_config(const std::filesystem::path& dir, UseRemote remote) {
    const char* base = std::getenv("KCACHE_BENCH_KEYS");
    if (!base) {
        die("KCACHE_BENCH_KEYS is not set (make_bench_keys)");
    }
    Config c;  // the remote tier's settings, whatever the backend
    std::string error;
    if (!load_config(c, error)) {
        die("the remote's settings: " + error);
    }
    const Config bench = cache_config(dir);  // what cache_config sets, the rest as loaded
    c.dir = bench.dir;
    c.jit_helper = bench.jit_helper;
    c.jit_timeout = bench.jit_timeout;
    c.max_resident_bytes = bench.max_resident_bytes;
    if (remote == UseRemote::no) {
        c.remote_urls.clear();
    }
    c.remote_signing_key = std::string(base) + ".key";
    c.trusted_keys = {std::string(base) + ".pub"};
    return c;
}

int run_hit(const std::vector<std::string>& args) {
    if (args.size() != 4) {
        die("hit: expected DIR remote|none KERNEL");
    }
    const bool remote = args[2] == "remote";
    const Config c = node_config(args[1], remote ? UseRemote::yes : UseRemote::no);
    Outcome o;
    auto cache = Cache::open(c, &o);
    if (!cache) {
        die("Cache::open: " + o.message);
    }
    auto context = new_context();
    const auto start = std::chrono::steady_clock::now();
    Program p = request(*cache, context.get(), args[3]);
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    require_rung(p, remote ? Rung::remote : Rung::user_store, args[3].c_str());
    std::cout << "us " << us.count() << std::endl;
    return 0;
}

int run_node(const std::vector<std::string>& args) {
    if (args.size() != 6) {
        die("node: expected DIR remote|none LIMIT MODE TIMEOUT_MS");
    }
    use_private_dirs();  // PoCL's own cache too: a node starts cold
    Config c = node_config(args[1], args[2] == "remote" ? UseRemote::yes : UseRemote::no);
    c.remote_timeout = std::chrono::milliseconds(std::stoi(args[5]));
    const Mode mode = args[4] == "fail_fast" ? Mode::fail_fast : Mode::blocking;
    Outcome o;
    auto cache = Cache::open(c, &o);
    if (!cache) {
        die("Cache::open: " + o.message);
    }
    auto context = new_context();
    const auto variants = bench_variants(std::stoul(args[3]));
    const auto start = std::chrono::steady_clock::now();
    for (const auto& v : variants) {
        KernelRequest r;
        r.kernel = v.kernel;
        r.params.insert(v.params.begin(), v.params.end());
        r.mode = mode;
        auto p = cache->program(context.get(), pocl_device(), r);
        if (mode == Mode::blocking && !p.ok()) {
            die("node: " + v.id() + ": " + p.outcome().message);
        }
    }
    const auto wall = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    cache->drain(std::chrono::seconds(60));  // uploads, off the measured path
    const CacheStats s = cache->stats();
    std::cout << "compiles " << s.jit_compiles << " wall_us " << wall.count() << " remote_hits "
              << s.remote_hits << " timeouts " << s.remote_timeouts << std::endl;
    return 0;
}

}  // namespace kcache::bench
