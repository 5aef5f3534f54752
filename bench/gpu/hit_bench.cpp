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
//     calls forget() does: the next request sweeps it and pays for
//     destroying it.
//  1b. where a resident hit's time over the floor goes: the floor, the hit,
//     the floor with the cache's other driver calls, and the hit right after
//     a repeat hit (the cache's code and data warm in the CPU caches); the
//     hit split at the driver's calls (before, inside, after).
//  2. the store hit's steps, each timed alone in a new context: device probe,
//     context check, render, key, Store::get (read + decode + checksum),
//     decode + checksum alone, checksum alone, the two driver calls.
//  3. the first hit of a fresh process (Cache::open + probe + hit) vs the
//     floor's first load in a fresh process (this executable as children).
//  4. resident memory per 1,000 contexts: create, get, release both; kcache
//     vs the floor's loop without kcache.

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>

#include "gpu_common.hpp"
#include "kcache/cache/keys.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/store/codec.hpp"
#include "kcache/store/store.hpp"

// In-situ timing of a load (section 1b): this executable's own definitions
// of the driver calls a hit makes come before libOpenCL's for every call made
// from it, kcache's statically linked code included. Each forwards to the
// driver's and, while a timeline is recorded on its thread, notes when it
// was entered and left.
namespace {

struct Stamp {
    const char* call;
    std::int64_t entered, left;
};
thread_local std::vector<Stamp>* g_timeline = nullptr;

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

template <class F>
F next_definition(const char* name) {
    return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

// Calls the driver's `name` with `args`, noting it in the timeline.
template <class R, class... Args>
R forward(const char* name, R (*&driver)(Args...), Args... args) {
    if (driver == nullptr) {
        driver = next_definition<R (*)(Args...)>(name);
    }
    if (g_timeline == nullptr) {
        return driver(args...);
    }
    const std::int64_t in = now_ns();
    R r = driver(args...);
    g_timeline->push_back({name, in, now_ns()});
    return r;
}

}  // namespace

extern "C" {
cl_program clCreateProgramWithBinary(cl_context context, cl_uint num_devices,
                                     const cl_device_id* device_list, const size_t* lengths,
                                     const unsigned char** binaries, cl_int* binary_status,
                                     cl_int* errcode_ret) {
    static cl_program (*driver)(cl_context, cl_uint, const cl_device_id*, const size_t*,
                                const unsigned char**, cl_int*, cl_int*) = nullptr;
    return forward("clCreateProgramWithBinary", driver, context, num_devices, device_list, lengths,
                   binaries, binary_status, errcode_ret);
}

cl_int clBuildProgram(cl_program program, cl_uint num_devices, const cl_device_id* device_list,
                      const char* options, void(CL_CALLBACK* pfn_notify)(cl_program, void*),
                      void* user_data) {
    static cl_int (*driver)(cl_program, cl_uint, const cl_device_id*, const char*,
                            void(CL_CALLBACK*)(cl_program, void*), void*) = nullptr;
    return forward("clBuildProgram", driver, program, num_devices, device_list, options, pfn_notify,
                   user_data);
}

cl_int clGetContextInfo(cl_context context, cl_context_info name, size_t size, void* value,
                        size_t* size_ret) {
    static cl_int (*driver)(cl_context, cl_context_info, size_t, void*, size_t*) = nullptr;
    return forward("clGetContextInfo", driver, context, name, size, value, size_ret);
}

cl_int clGetDeviceInfo(cl_device_id device, cl_device_info name, size_t size, void* value,
                       size_t* size_ret) {
    static cl_int (*driver)(cl_device_id, cl_device_info, size_t, void*, size_t*) = nullptr;
    return forward("clGetDeviceInfo", driver, device, name, size, value, size_ret);
}

cl_int clRetainContext(cl_context context) {
    static cl_int (*driver)(cl_context) = nullptr;
    return forward("clRetainContext", driver, context);
}

cl_int clRetainProgram(cl_program program) {
    static cl_int (*driver)(cl_program) = nullptr;
    return forward("clRetainProgram", driver, program);
}
}

namespace gpu_bench {
namespace {

namespace kk = kcache::kernels;
using Bytes = std::vector<std::uint8_t>;

constexpr int kSamples = 40;

double us_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// A context owned by this scope. With GPU_BENCH_EVICT_MB=N, N MiB are
// written after the context is made: on a CPU device this imitates what a
// GPU context's creation leaves in the CPU's caches (all of them cold).
struct Ctx {
    cl_context c = nullptr;
    explicit Ctx(const Device& d) {
        cl_int err = CL_SUCCESS;
        c = clCreateContext(nullptr, 1, &d.device, nullptr, nullptr, &err);
        static const char* evict_env = std::getenv("GPU_BENCH_EVICT_MB");
        static std::vector<char> junk(
            evict_env ? static_cast<std::size_t>(std::max(0, std::atoi(evict_env))) << 20 : 0);
        for (std::size_t i = 0; i < junk.size(); i += 64) {
            junk[i]++;
        }
    }
    ~Ctx() {
        if (c != nullptr) {
            clReleaseContext(c);
        }
    }
    Ctx(const Ctx&) = delete;
    Ctx& operator=(const Ctx&) = delete;
};

kk::Rendered rendered(const std::string& kernel) {
    return *kk::render(*kk::make_variant(kernel));
}

kcache::service::CompileInput input_of(const std::string& kernel) {
    auto r = rendered(kernel);
    return {r.variant.id(), r.source, r.options, r.entry_points};
}

std::unique_ptr<kcache::Cache> open_at(const std::filesystem::path& dir, bool resident) {
    auto c = config_at(dir);
    if (!resident) {
        c.max_resident_bytes = 0;
    }
    return kcache::Cache::open(c);
}

kcache::KernelRequest request_of(const std::string& kernel) {
    return {kernel, {}, std::chrono::milliseconds(120'000), kcache::Mode::blocking};
}

// The floor on `ctx`: create + build; returns µs (negative on failure), and
// the create call's share in `create_us` when given.
double floor_us(const Device& d, cl_context ctx, const Bytes& bytes, const std::string& options,
                double* create_us = nullptr) {
    const unsigned char* data = bytes.data();
    std::size_t size = bytes.size();
    cl_int err = CL_SUCCESS;
    const auto t0 = Clock::now();
    cl_program p = clCreateProgramWithBinary(ctx, 1, &d.device, &size, &data, nullptr, &err);
    if (create_us != nullptr) {
        *create_us = us_since(t0);
    }
    const bool ok = err == CL_SUCCESS && clBuildProgram(p, 1, &d.device, options.c_str(), nullptr,
                                                        nullptr) == CL_SUCCESS;
    const double t = us_since(t0);
    if (p != nullptr) {
        clReleaseProgram(p);
    }
    return ok ? t : -1;
}

// The stored bytes of `kernel` on `d` (JIT-built into `dir` first when needed).
Bytes stored_bytes(const Device& d, const std::filesystem::path& dir, const std::string& kernel) {
    auto cache = open_at(dir, false);
    auto p = cache ? cache->program(d.context, d.device, request_of(kernel)) : kcache::Program();
    if (!p.ok()) {
        std::printf("%s: %s\n", kernel.c_str(), p.outcome().message.c_str());
        return {};
    }
    auto id = kcache::device_db::probe(d.device);
    auto store = kcache::store::Store::open(dir);
    auto e = store->get(kcache::service::jit_key_fields(*id, input_of(kernel)));
    return e ? e->bytes : Bytes{};
}

void hit_vs_floor(const Device& d, const std::filesystem::path& dir) {
    std::printf(
        "\n1. hit vs floor, long-lived Cache, new context per sample (%d samples, medians, µs;"
        " paired: the median of resident ÷ floor within each round)\n",
        kSamples);
    std::printf("%-16s %9s %9s %9s %9s %9s %9s %9s %9s\n", "kernel", "resident", "store", "floor",
                "sweep", "res/floor", "sto/floor", "swp/floor", "paired");
    for (const auto& k : kk::kernels()) {
        const Bytes bytes = stored_bytes(d, dir, k.name);
        if (bytes.empty()) {
            continue;
        }
        const std::string options = rendered(k.name).options;
        auto resident = open_at(dir, true), stored = open_at(dir, false);
        auto sweeping = open_at(dir, true);
        std::vector<double> t[4];
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
            }
        };
        const std::function<void()> arms[] = {
            [&] { via(*resident, true, true, t[0]); }, [&] { via(*stored, false, true, t[1]); },
            [&] {
                Ctx ctx(d);
                t[2].push_back(floor_us(d, ctx.c, bytes, options));
            },
            [&] { via(*sweeping, true, false, t[3]); }};
        for (auto* c : {resident.get(), sweeping.get()}) {
            Ctx warm(d);
            c->program(warm.c, d.device, request_of(k.name));
            c->forget(warm.c);
        }
        for (int i = 0; i < kSamples; ++i) {
            for (int j = 0; j < 4; ++j) {
                arms[(i + j) % 4]();
            }
        }
        const double r = median(t[0]), s = median(t[1]), f = median(t[2]), w = median(t[3]);
        std::vector<double> paired;  // resident ÷ floor within each round
        for (std::size_t i = 0; i < t[0].size() && i < t[2].size(); ++i) {
            paired.push_back(t[0][i] / t[2][i]);
        }
        std::printf("%-16s %9.1f %9.1f %9.1f %9.1f %8.2fx %8.2fx %8.2fx %8.2fx%s\n", k.name.c_str(),
                    r, s, f, w, r / f, s / f, w / f, median(paired),
                    wrong ? "  (WRONG RUNG OR FAILURE)" : "");
    }
}

// The driver calls a resident hit makes beyond the floor's two, on `ctx`
// around `floor_us` (the context check; the cache's own references on the
// program and the context; the sweep's reference count), released untimed.
double floor_with_calls_us(const Device& d, cl_context ctx, const Bytes& bytes,
                           const std::string& options) {
    const auto t0 = Clock::now();
    cl_device_id devs[8] = {};
    clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof(devs), devs, nullptr);
    const unsigned char* data = bytes.data();
    std::size_t size = bytes.size();
    cl_int err = CL_SUCCESS, status = CL_SUCCESS;
    cl_program p = clCreateProgramWithBinary(ctx, 1, &d.device, &size, &data, &status, &err);
    const bool ok = err == CL_SUCCESS && clBuildProgram(p, 1, &d.device, options.c_str(), nullptr,
                                                        nullptr) == CL_SUCCESS;
    clRetainProgram(p);
    clRetainContext(ctx);
    cl_uint refs = 0;
    clGetContextInfo(ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof(refs), &refs, nullptr);
    const double t = us_since(t0);
    clReleaseContext(ctx);
    if (p != nullptr) {
        clReleaseProgram(p);
        clReleaseProgram(p);
    }
    return ok ? t : -1;
}

// Where a resident hit's time over the floor goes, new context per sample,
// four arms rotating: the floor; the resident hit; the floor with the
// cache's other driver calls; the resident hit right after a repeat hit on a
// context the cache keeps (the cache's own code and data in the CPU caches).
// The resident hit is split at the driver's calls (the definitions above):
// before clCreateProgramWithBinary, inside it and clBuildProgram, after
// clBuildProgram; and along every driver call it makes.
void hit_parts(const Device& d, const std::filesystem::path& dir) {
    std::printf(
        "\n1b. resident hit over the floor, new context per sample (%d samples, medians, µs)\n",
        kSamples);
    std::printf("%-16s %9s %9s %11s %11s %9s %9s %9s\n", "kernel", "floor", "resident",
                "floor+calls", "warmed hit", "before", "driver", "after");
    for (const auto& k : kk::kernels()) {
        const Bytes bytes = stored_bytes(d, dir, k.name);
        if (bytes.empty()) {
            continue;
        }
        const std::string options = rendered(k.name).options;
        auto cache = open_at(dir, true);
        Ctx kept(d);
        (void)cache->program(kept.c, d.device, request_of(k.name));
        const kcache::KernelRequest request = request_of(k.name);
        std::vector<double> t[4], parts[3];
        std::vector<std::vector<double>> steps;  // per timeline step: kcache's time, the call's
        std::vector<const char*> calls;
        bool wrong = false;
        auto hit = [&](bool warm, std::vector<double>& out) {
            Ctx ctx(d);
            if (warm) {
                wrong |= cache->program(kept.c, d.device, request_of(k.name)).outcome().rung !=
                         kcache::Rung::in_process;
            }
            std::vector<Stamp> timeline;
            timeline.reserve(32);
            g_timeline = warm ? nullptr : &timeline;
            const std::int64_t start = now_ns();
            const auto t0 = Clock::now();
            auto p = cache->program(ctx.c, d.device, request);
            out.push_back(us_since(t0));
            const std::int64_t end = now_ns();
            g_timeline = nullptr;
            if (!warm) {  // the cold hit split at the driver's calls
                std::int64_t in = 0, left = 0, last = start;
                std::vector<double> step;
                std::vector<const char*> names;
                for (const auto& st : timeline) {
                    step.push_back(static_cast<double>(st.entered - last) / 1000.0);
                    step.push_back(static_cast<double>(st.left - st.entered) / 1000.0);
                    names.push_back(st.call);
                    last = st.left;
                    in = std::string(st.call) == "clCreateProgramWithBinary" ? st.entered : in;
                    left = std::string(st.call) == "clBuildProgram" ? st.left : left;
                }
                step.push_back(static_cast<double>(end - last) / 1000.0);
                parts[0].push_back(static_cast<double>(in - start) / 1000.0);
                parts[1].push_back(static_cast<double>(left - in) / 1000.0);
                parts[2].push_back(static_cast<double>(end - left) / 1000.0);
                if (steps.empty()) {
                    steps.resize(step.size());
                    calls = names;
                }
                if (step.size() == steps.size()) {  // the same calls as the first hit
                    for (std::size_t i = 0; i < step.size(); ++i) {
                        steps[i].push_back(step[i]);
                    }
                }
            }
            wrong |= !p.ok() || !p.outcome().resident;
            p = kcache::Program();
            cache->forget(ctx.c);
        };
        const std::function<void()> arms[] = {
            [&] {
                Ctx ctx(d);
                t[0].push_back(floor_us(d, ctx.c, bytes, options));
            },
            [&] { hit(false, t[1]); },
            [&] {
                Ctx ctx(d);
                t[2].push_back(floor_with_calls_us(d, ctx.c, bytes, options));
            },
            [&] { hit(true, t[3]); }};
        for (int i = 0; i < kSamples; ++i) {
            for (int j = 0; j < 4; ++j) {
                arms[(i + j) % 4]();
            }
        }
        std::printf("%-16s %9.1f %9.1f %11.1f %11.1f %9.1f %9.1f %9.1f%s\n", k.name.c_str(),
                    median(t[0]), median(t[1]), median(t[2]), median(t[3]), median(parts[0]),
                    median(parts[1]), median(parts[2]), wrong ? "  (WRONG RUNG OR FAILURE)" : "");
        std::printf("    timeline (medians, µs; [kcache's own] then each driver call):");
        for (std::size_t i = 0; i < steps.size(); ++i) {
            if (i % 2 == 0) {
                std::printf(" [%.1f]", median(steps[i]));
            } else {
                std::printf(" %s %.1f", calls[i / 2] + 2, median(steps[i]));  // without "cl"
            }
        }
        std::printf("\n");
    }
}

void steps(const Device& d, const std::filesystem::path& dir) {
    std::printf("\n2. store hit steps, each alone, new context per sample (medians, µs)\n");
    std::printf("%-16s %8s %8s %8s %8s %8s %8s %8s %8s %8s\n", "kernel", "probe", "ctxcheck",
                "render", "key", "get", "decode", "checksum", "create", "build");
    auto id = kcache::device_db::probe(d.device);
    auto store = kcache::store::Store::open(dir);
    for (const auto& k : kk::kernels()) {
        const auto fields = kcache::service::jit_key_fields(*id, input_of(k.name));
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
            auto key = kcache::store::make_key(kcache::service::jit_key_fields(
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

std::string self_path() {
    char buf[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

// Runs this executable with `args`; returns the first number it printed
// (µs), or -1; a second number, when printed, goes to `part`.
double child_us(const std::string& args, double* part = nullptr) {
    const std::string cmd = "'" + self_path() + "' " + args;
    FILE* f = ::popen(cmd.c_str(), "r");
    if (f == nullptr) {
        return -1;
    }
    double us = -1, second = -1;
    const int got = std::fscanf(f, "%lf %lf", &us, &second);
    if (got < 1) {
        us = -1;
    }
    if (part != nullptr) {
        *part = got == 2 ? second : -1;
    }
    return ::pclose(f) == 0 ? us : -1;
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
        " store open %.1f, probe %.1f; then Cache::open %.1f, hit %.1f\n",
        median(t[0]), median(t[1]), median(t[2]), median(t[3]), median(t[4]));
}

void first_in_process(const Device& d, const std::filesystem::path& dir) {
    std::printf(
        "\n3. first hit in a fresh process (open + probe + hit) vs the floor's first load"
        " (medians of 7, µs)\n");
    std::printf("%-16s %10s %10s %10s %10s\n", "kernel", "kcache", "of it open", "floor",
                "difference");
    for (const auto& k : kk::kernels()) {
        const Bytes bytes = stored_bytes(d, dir, k.name);
        if (bytes.empty()) {
            continue;
        }
        const auto file = dir / (k.name + ".bin");
        std::ofstream(file, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()),
                   static_cast<std::streamsize>(bytes.size()));
        std::vector<double> hit, open, floor;
        for (int i = 0; i < 7; ++i) {
            double opened = -1;
            hit.push_back(
                child_us("child-first-hit " + k.name + " '" + dir.string() + "'", &opened));
            open.push_back(opened);
            floor.push_back(child_us("child-first-floor " + k.name + " '" + file.string() + "'"));
        }
        const double h = median(hit), f = median(floor);
        std::printf("%-16s %10.1f %10.1f %10.1f %+10.1f\n", k.name.c_str(), h, median(open), f,
                    h - f);
    }
    first_steps(dir);
}

std::uint64_t resident_kib() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    statm >> size >> resident;
    return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
}

// Resident growth in KiB per 1,000 rounds of `round` (after 20 untimed).
double kib_per_1000(int rounds, const std::function<bool()>& round) {
    for (int i = 0; i < 20; ++i) {
        round();
    }
    const auto before = resident_kib();
    int failed = 0;
    for (int i = 0; i < rounds; ++i) {
        failed += round() ? 0 : 1;
    }
    const double grown = static_cast<double>(resident_kib()) - static_cast<double>(before);
    if (failed > 0) {
        std::printf("   %d of %d rounds failed\n", failed, rounds);
    }
    return grown * 1000.0 / rounds;
}

void context_cycle(const Device& d, const std::filesystem::path& dir) {
    const char* env = std::getenv("GPU_BENCH_CONTEXTS");
    const int rounds = env != nullptr ? std::max(10, std::atoi(env)) : 1000;
    const std::string kernel = "dot";
    const Bytes bytes = stored_bytes(d, dir, kernel);
    const std::string options = rendered(kernel).options;
    auto cache = open_at(dir, true);
    std::printf(
        "\n4. resident memory per 1,000 contexts (%d rounds each: create a context, get"
        " %s, release both)\n",
        rounds, kernel.c_str());
    const double floor = kib_per_1000(rounds, [&] {
        Ctx ctx(d);
        return ctx.c != nullptr && floor_us(d, ctx.c, bytes, options) >= 0;
    });
    const double with = kib_per_1000(rounds, [&] {
        Ctx ctx(d);
        return ctx.c != nullptr && cache->program(ctx.c, d.device, request_of(kernel)).ok();
    });
    std::printf(
        "no kcache: %+.0f KiB per 1,000 contexts; kcache: %+.0f KiB per 1,000 contexts"
        " (%llu programs released)\n",
        floor, with, static_cast<unsigned long long>(cache->stats().programs_released));
}

}  // namespace

int long_lived(const Device& d, const std::filesystem::path& root) {
    const auto dir = root / "long-lived";
    std::filesystem::create_directories(dir);
    hit_vs_floor(d, dir);
    hit_parts(d, dir);
    steps(d, dir);
    first_in_process(d, dir);
    context_cycle(d, dir);
    return 0;
}

int hit_parts_only(const Device& d, const std::filesystem::path& root) {
    const auto dir = root / "long-lived";
    std::filesystem::create_directories(dir);
    hit_parts(d, dir);
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
    std::printf("%.1f %.1f\n", us, opened);
    return 0;
}

int child_first_steps(const Device& d, const std::string& kernel,
                      const std::filesystem::path& dir) {
    const auto config = config_at(dir);
    auto t0 = Clock::now();
    const bool db = kcache::device_db::DeviceDb::with_override(config.device_db).ok();
    const double db_us = us_since(t0);
    t0 = Clock::now();
    const bool store = kcache::store::Store::open(dir).ok();
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

int child_first_floor(const Device& d, const std::string& kernel,
                      const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    const Bytes bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const double us = floor_us(d, d.context, bytes, rendered(kernel).options);
    if (us < 0) {
        return 1;
    }
    std::printf("%.1f\n", us);
    return 0;
}

}  // namespace gpu_bench
