// gpu_bench long-lived: kcache in a process that lives long and creates
// contexts, measured side by side on one device, per registry kernel
// (default variant):
//  1. hit vs floor: one Cache per arm for the whole run, a new context per
//     sample (created and released untimed), arms rotating: Cache::program
//     answered from the resident bytes, Cache::program answered by the store
//     (resident bytes off), and the floor: clCreateProgramWithBinary +
//     clBuildProgram of the stored bytes with the build options kcache passes.
//     The Cache arms call forget() (untimed) before releasing their context,
//     so that every arm destroys its context outside the timing; a fourth arm
//     (resident, "sweep") leaves that to the cache, as a caller that never
//     calls forget() does: a sweep hands it to the releaser thread. That arm
//     runs in a second pass, rotating with a floor of its own (floor2),
//     with a pause after each of its samples (untimed) so that the teardown
//     stays out of the floor's timing.
//  1b. where a resident hit's time over the floor goes (hit_parts.cpp).
//  2. the store hit's steps, each timed alone in a new context: device probe,
//     context check, render, key, Store::get (read + decode + checksum),
//     decode + checksum alone, checksum alone, the two driver calls.
//  3. the first hit of a fresh process (Cache::open + probe + hit) vs the
//     floor's first load in a fresh process (this executable as children).
//  3b. that first hit split into its steps, from its own trace (hit_steps.cpp).
//  4. resident memory per 1,000 contexts: create, get, release both; kcache
//     vs the floor's loop without kcache, a second after the last round, and
//     the peak on the way (hit_loops.cpp).
//  5. the same loop's time, end to end, kcache (no forget()) vs without kcache.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <thread>

#include "hit_common.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/store/codec.hpp"
#include "kcache/store/store.hpp"

namespace gpu_bench {
namespace {

constexpr int kSettleMs = 400;

void hit_vs_floor(const Device& d, const std::filesystem::path& dir) {
    std::printf(
        "\n1. hit vs floor, long-lived Cache, new context per sample (%d samples, medians, µs;"
        " paired: the median of resident ÷ floor within each round; fl+read: the floor reading"
        " its bytes from their file first, as the store arm reads its copy)\n",
        kSamples);
    std::printf("%-16s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s\n", "kernel", "resident",
                "store", "floor", "fl+read", "sweep", "floor2", "res/floor", "sto/floor", "sto/f+r",
                "swp/floor2", "paired");
    for (const auto& k : kcache::kernels::kernels()) {
        const Bytes bytes = stored_bytes(d, dir, k.name);
        if (bytes.empty()) {
            continue;
        }
        const std::string options = rendered(k.name).options;
        const auto file = bytes_file(dir, k.name, bytes);
        auto resident = open_at(dir, true), stored = open_at(dir, false);
        std::vector<double> t[6];
        bool wrong = false;
        const kcache::KernelRequest request = request_of(k.name);
        auto via = [&](kcache::Cache& cache, bool from_memory, bool forget,
                       std::vector<double>& out) {
            Ctx ctx(d);
            const auto t0 = Clock::now();
            auto p = cache.program(ctx.c, d.device, request);
            out.push_back(us_since(t0));
            wrong |= !p.ok() || p.outcome().resident != from_memory;
            p = kcache::Program();
            if (forget) {
                cache.forget(ctx.c);
            } else {
                // The context the caller releases now is handed to the
                // releaser thread by its next sweep (at most 250 ms away),
                // whose teardown (tens of ms on some drivers) would otherwise
                // overlap the floor's timing: let it finish, untimed.
                std::this_thread::sleep_for(std::chrono::milliseconds(kSettleMs));
            }
        };
        auto floor_into = [&](std::vector<double>& out) {
            Ctx ctx(d);
            out.push_back(floor_us(d, ctx.c, bytes, options));
        };
        for (auto* c : {resident.get()}) {
            Ctx warm(d);
            c->program(warm.c, d.device, request_of(k.name));
            c->forget(warm.c);
        }
        auto read_floor_into = [&](std::vector<double>& out) {
            Ctx ctx(d);
            out.push_back(read_floor_us(d, ctx.c, file, options));
        };
        const std::function<void()> arms[] = {
            [&] { via(*resident, true, true, t[0]); }, [&] { via(*stored, false, true, t[1]); },
            [&] { floor_into(t[2]); }, [&] { read_floor_into(t[5]); }};
        rotate(arms, 4);
        // The caller that never calls forget(), in a pass of its own beside
        // the floor, so that its contexts' teardown in the background never
        // overlaps the other arms.
        auto sweeping = open_at(dir, true);
        {
            Ctx warm(d);
            sweeping->program(warm.c, d.device, request_of(k.name));
            sweeping->forget(warm.c);
        }
        const std::function<void()> sweep_arms[] = {[&] { via(*sweeping, true, false, t[3]); },
                                                    [&] { floor_into(t[4]); }};
        rotate(sweep_arms, 2);
        const double r = median(t[0]), s = median(t[1]), f = median(t[2]), w = median(t[3]);
        const double f2 = median(t[4]), fr = median(t[5]);
        std::vector<double> paired;  // resident ÷ floor within each round
        for (std::size_t i = 0; i < t[0].size() && i < t[2].size(); ++i) {
            paired.push_back(t[0][i] / t[2][i]);
        }
        std::printf(
            "%-16s %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f %8.2fx %8.2fx %8.2fx %8.2fx %8.2fx%s\n",
            k.name.c_str(), r, s, f, fr, w, f2, r / f, s / f, s / fr, w / f2, median(paired),
            wrong ? "  (WRONG RUNG OR FAILURE)" : "");
    }
}

void steps(const Device& d, const std::filesystem::path& dir) {
    std::printf("\n2. store hit steps, each alone, new context per sample (medians, µs)\n");
    std::printf("%-16s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "kernel", "probe", "ctxcheck",
                "render", "key", "get", "decode", "checksum", "create", "build");
    auto id = kcache::device_db::probe(d.device);
    auto store = kcache::store::Store::open(dir);
    for (const auto& k : kcache::kernels::kernels()) {
        const auto fields = kcache::device_db::jit_key_fields(*id, input_of(k.name));
        auto entry = store->get(fields);
        if (!entry) {
            continue;
        }
        const Bytes raw = entry->bytes;
        const auto policy = kcache::store::Policy{};
        const auto encoded =
            kcache::store::encode(raw, policy.zstd_level, policy.zstd_compress_literals);
        const auto sum = kcache::store::checksum_of(raw);
        const std::string options = rendered(k.name).options;
        std::vector<double> t[9];
        for (int i = 0; i < kSamples; ++i) {
            Ctx ctx(d);
            auto t0 = Clock::now();
            (void)kcache::device_db::probe(d.device);
            t[0].push_back(us_since(t0));
            t0 = Clock::now();
            cl_uint n = 0;
            clGetContextInfo(ctx.c, CL_CONTEXT_NUM_DEVICES, sizeof(n), &n, nullptr);
            std::vector<cl_device_id> devs(n);
            clGetContextInfo(ctx.c, CL_CONTEXT_DEVICES, n * sizeof(cl_device_id), devs.data(),
                             nullptr);
            t[1].push_back(us_since(t0));
            t0 = Clock::now();
            auto r = rendered(k.name);
            t[2].push_back(us_since(t0));
            t0 = Clock::now();
            auto key = kcache::store::make_key(kcache::device_db::jit_key_fields(
                *id, {r.variant.id(), r.source, r.options, r.entry_points}));
            t[3].push_back(us_since(t0));
            t0 = Clock::now();
            auto got = store->get(key);
            t[4].push_back(us_since(t0));
            t0 = Clock::now();
            auto decoded =
                kcache::store::decode_verified(encoded.codec, encoded.data, raw.size(), sum);
            t[5].push_back(us_since(t0));
            t0 = Clock::now();
            (void)kcache::store::checksum_of(raw);
            t[6].push_back(us_since(t0));
            double create = 0;
            const double both = floor_us(d, ctx.c, got ? got->bytes : raw, options, &create);
            t[7].push_back(create);
            t[8].push_back(both - create);
        }
        std::printf("%-16s", k.name.c_str());
        for (auto& v : t) {
            std::printf(" %8.1f", median(v));
        }
        std::printf("\n");
    }
}

// The parts of a fresh process's first hit, each the first of its kind in a
// child (so each pays its own cold start): the device data, the store's
// open, the device probe, then Cache::open and the hit with those warm.
void first_steps(const std::filesystem::path& dir) {
    constexpr int kParts = 5;
    std::vector<double> t[kParts];
    for (int i = 0; i < 7; ++i) {
        const std::string cmd =
            "'" + self_path() + "' child-first-steps dot '" + dir.string() + "'";
        FILE* f = ::popen(cmd.c_str(), "r");
        double v[kParts] = {};
        const bool read = f != nullptr && std::fscanf(f, "%lf %lf %lf %lf %lf", &v[0], &v[1], &v[2],
                                                      &v[3], &v[4]) == kParts;
        if (f == nullptr || ::pclose(f) != 0 || !read) {
            continue;
        }
        for (int j = 0; j < kParts; ++j) {
            t[j].push_back(v[j]);
        }
    }
    std::printf(
        "first hit's parts (dot), each cold in a fresh process (medians, µs): device data %.1f,"
        " store open (deferred, as Cache::open) %.1f, probe %.1f; then Cache::open %.1f, hit"
        " %.1f\n",
        median(t[0]), median(t[1]), median(t[2]), median(t[3]), median(t[4]));
}

void first_in_process(const Device& d, const std::filesystem::path& dir) {
    // Each round runs a fresh process for kcache's first hit, then one for
    // the floor's first load; "paired" is the median over rounds of the
    // difference within a round (the floor's first load itself moves by
    // hundreds of µs from process to process). The floor reads the bytes
    // from their file and loads them; "load" is its load alone. "close" is
    // what the child's close of its program and cache took after the hit.
    constexpr int kRounds = 11;
    std::printf(
        "\n3. first hit in a fresh process (open + probe + hit) vs the floor's first read and"
        " load (medians of %d rounds, µs)\n",
        kRounds);
    std::printf("%-16s %10s %10s %10s %10s %10s %10s %10s\n", "kernel", "kcache", "of it open",
                "floor", "paired", "load", "paired", "close");
    for (const auto& k : kcache::kernels::kernels()) {
        const Bytes bytes = stored_bytes(d, dir, k.name);
        if (bytes.empty()) {
            continue;
        }
        const auto file = bytes_file(dir, k.name, bytes);
        std::vector<double> hit, open, floor, paired, load, paired_load, close;
        for (int i = 0; i < kRounds; ++i) {
            double opened = -1, loaded = -1, closed = -1;
            hit.push_back(child_us("child-first-hit " + k.name + " '" + dir.string() + "'", &opened,
                                   &closed));
            open.push_back(opened);
            close.push_back(closed);
            floor.push_back(
                child_us("child-first-floor " + k.name + " '" + file.string() + "'", &loaded));
            load.push_back(loaded);
            paired.push_back(hit.back() - floor.back());
            paired_load.push_back(hit.back() - loaded);
        }
        std::printf("%-16s %10.1f %10.1f %10.1f %+10.1f %10.1f %+10.1f %10.1f\n", k.name.c_str(),
                    median(hit), median(open), median(floor), median(paired), median(load),
                    median(paired_load), median(close));
    }
    first_steps(dir);
}

}  // namespace

int long_lived(const Device& d, const std::filesystem::path& root) {
    const auto dir = root / "long-lived";
    std::filesystem::create_directories(dir);
    // GPU_BENCH_SECTIONS=1,3,5 runs only those sections (default: all), so
    // that a device call of limited length can run what it needs.
    const char* only = std::getenv("GPU_BENCH_SECTIONS");
    const std::string sections = only ? "," + std::string(only) + "," : "";
    auto want = [&](const char* s) {
        return sections.empty() || sections.find("," + std::string(s) + ",") != std::string::npos;
    };
    if (want("1")) {
        hit_vs_floor(d, dir);
    }
    if (want("1b")) {
        hit_parts(d, dir);
    }
    if (want("2")) {
        steps(d, dir);
    }
    if (want("3")) {
        first_in_process(d, dir);
    }
    if (want("3b")) {
        first_hit_steps(d, dir);
    }
    loops(d, dir, want("4"), want("5"));
    return 0;
}

int child_first_hit(const Device& d, const std::string& kernel, const std::filesystem::path& dir) {
    const auto config = config_at(dir);
    const auto t0 = Clock::now();
    auto cache = kcache::Cache::open(config);
    const double opened = us_since(t0);
    auto p = cache ? cache->program(d.context, d.device, request_of(kernel)) : kcache::Program();
    const double us = us_since(t0);
    if (!p.ok() || p.outcome().rung != kcache::Rung::user_store) {
        return 1;
    }
    // The close: the program released, then the cache (its threads joined,
    // its write-back).
    const auto t1 = Clock::now();
    p = kcache::Program();
    cache.reset();
    std::printf("%.1f %.1f %.1f\n", us, opened, us_since(t1));
    return 0;
}

int child_first_steps(const Device& d, const std::string& kernel,
                      const std::filesystem::path& dir) {
    const auto config = config_at(dir);
    auto t0 = Clock::now();
    const bool db = kcache::device_db::DeviceDb::with_override(config.device_db).ok();
    const double db_us = us_since(t0);
    t0 = Clock::now();
    kcache::store::Policy deferred;  // as Cache::open opens it
    deferred.defer_open = true;
    const bool store = kcache::store::Store::open(dir, deferred).ok();
    const double store_us = us_since(t0);
    t0 = Clock::now();
    const bool probed = kcache::device_db::probe(d.device).ok();
    const double probe_us = us_since(t0);
    t0 = Clock::now();
    auto cache = kcache::Cache::open(config);
    const double open_us = us_since(t0);
    t0 = Clock::now();
    auto p = cache ? cache->program(d.context, d.device, request_of(kernel)) : kcache::Program();
    const double hit_us = us_since(t0);
    if (!db || !store || !probed || !p.ok() || p.outcome().rung != kcache::Rung::user_store) {
        return 1;
    }
    std::printf("%.1f %.1f %.1f %.1f %.1f\n", db_us, store_us, probe_us, open_us, hit_us);
    return 0;
}

// The floor's first load: reading the bytes from their file (in the page
// cache, as the hit's copy is) and loading them; prints the whole, then the
// load alone.
int child_first_floor(const Device& d, const std::string& kernel,
                      const std::filesystem::path& file) {
    double load = -1;
    const double whole = read_floor_us(d, d.context, file, rendered(kernel).options, &load);
    if (whole < 0) {
        return 1;
    }
    std::printf("%.1f %.1f\n", whole, load);
    return 0;
}

}  // namespace gpu_bench
