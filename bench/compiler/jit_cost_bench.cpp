// What a JIT through kcache-jit costs against building in this process, per
// registry kernel, and how far past its deadline a hung compile answers.
// Runs on PoCL here and on the GPU machine (bench/gpu/run.sh) alike: the
// platform is KCACHE_TEST_PLATFORM's, the helper KCACHE_TEST_JIT_PATH's.
//
//   jit_cost_bench breakdown [REPS]           (default 5)
//   jit_cost_bench overshoot [N] [DEADLINE_MS] (default 20, 2000)
//
// breakdown: for each registry kernel (default variant), REPS rounds, each
// interleaving three builds of a freshly salted source (a distinct extra
// kernel, so no driver cache can answer):
//   in-process  clCreateProgramWithSource + clBuildProgram + CL_PROGRAM_BINARIES
//               in a context this process keeps (the baseline); also timed
//               with a clCreateKernel per entry point, as the helper makes;
//   one-shot    JitCompiler with pool size 0: a fresh helper per compile (before);
//   pooled      JitCompiler with one persistent helper (after), asked as the
//               cache asks: on a CPU device the helper answers before its
//               warm-up launch and warms up afterwards (drained, untimed,
//               before the next build);
//   warm-first  the pooled helper warming up before it answers (CPU devices
//               only: the cache's way before; the warm-up generates machine
//               code that the in-process baseline never makes).
// The helper requests are the cache's (build options, entry points, the
// warm-up launch on CPU devices). Medians, ratios to the baseline, and where
// the helper's time went: spawn (posix_spawn to the helper's main), select
// (platform start + device match), context, build, warm-up, fetch
// (the binary), validate (loading it back), transfer (request and reply
// through the pipes), other (the rest: thread start, the parent's side).
//
// overshoot: N compiles of a kernel that takes the driver minutes, with a
// deadline DEADLINE_MS away, rotating over one-shot, pooled and the former
// watchdog (a one-shot helper killed at the deadline and reaped before the
// answer, as the runner did before the reaper thread); the time from the
// deadline until the answer: median and max of each.

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "jit_support.hpp"
#include "kcache/cl/handles.hpp"
#include "kcache/kernels/registry.hpp"
#include "temp_path.hpp"
#include "test_platform.hpp"

namespace {

using namespace kcache;
using compiler::Clock;
using namespace std::chrono_literals;

double ms(std::chrono::nanoseconds d) {
    return std::chrono::duration<double, std::milli>(d).count();
}

double median(std::vector<double> v) {
    if (v.empty()) {
        return 0;
    }
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

int next_salt() {
    static int salt = 0;
    return ++salt;
}

std::string salted(const std::string& source) {
    const std::string n = std::to_string(next_salt());
    return source + "\n__kernel void kcache_salt_" + n + "(__global int* p) { p[0] = " + n +
           "; }\n";
}

// The test platform's first device and a context this process keeps.
struct InProcess {
    cl_device_id device = nullptr;
    bool cpu = false;
    cl::ContextHandle context;

    static InProcess open() {
        InProcess p;
        p.device = test::find_test_device();
        if (p.device) {
            cl_device_type type = 0;
            clGetDeviceInfo(p.device, CL_DEVICE_TYPE, sizeof type, &type, nullptr);
            p.cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
            cl_int e = CL_SUCCESS;
            p.context.reset(clCreateContext(nullptr, 1, &p.device, nullptr, nullptr, &e));
        }
        return p;
    }

    // Milliseconds of one build with the binary fetched, after creating a
    // kernel for each of `kernels` (as the helper checks its entry points);
    // < 0 on failure.
    double build(const std::string& source, const std::string& options,
                 const std::vector<std::string>& kernels = {}) const {
        const auto t0 = Clock::now();
        const char* src = source.c_str();
        cl_int e = CL_SUCCESS;
        cl::ProgramHandle p(clCreateProgramWithSource(context.get(), 1, &src, nullptr, &e));
        if (!p || clBuildProgram(p.get(), 1, &device, options.c_str(), nullptr, nullptr)) {
            return -1;
        }
        for (const auto& name : kernels) {
            if (!cl::KernelHandle(clCreateKernel(p.get(), name.c_str(), &e))) {
                return -1;
            }
        }
        std::size_t size = 0;
        clGetProgramInfo(p.get(), CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
        std::string binary(size, '\0');
        auto* ptr = reinterpret_cast<unsigned char*>(binary.data());
        if (size == 0 ||
            clGetProgramInfo(p.get(), CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr)) {
            return -1;
        }
        return ms(Clock::now() - t0);
    }
};

// A helper's phases of one compile, in milliseconds.
struct Phases {
    std::vector<double> wall, spawn, select, context, build, warmup, fetch, validate, transfer,
        other;

    void add(const compiler::JitTimings& t) {
        const auto& h = t.helper;
        const double inside =
            (h.select_us + h.context_us + h.build_us + h.warmup_us + h.fetch_us + h.validate_us) /
            1000.0;
        wall.push_back(ms(t.wall));
        spawn.push_back(ms(t.spawn));
        select.push_back(h.select_us / 1000.0);
        context.push_back(h.context_us / 1000.0);
        build.push_back(h.build_us / 1000.0);
        warmup.push_back(h.warmup_us / 1000.0);
        fetch.push_back(h.fetch_us / 1000.0);
        validate.push_back(h.validate_us / 1000.0);
        transfer.push_back(ms(t.transfer));
        other.push_back(ms(t.wall) - ms(t.spawn) - ms(t.transfer) - inside);
    }
    void print(const char* label) const {
        std::printf(
            "    %-9s spawn %7.1f  select %7.1f  context %6.1f  build %8.1f  warm-up %6.1f  "
            "fetch %5.2f  validate %6.1f  transfer %5.2f  other %6.1f\n",
            label, median(spawn), median(select), median(context), median(build), median(warmup),
            median(fetch), median(validate), median(transfer), median(other));
    }
};

compiler::JitRequest request_for(const kernels::Rendered& r, bool cpu, bool warm_first = false) {
    compiler::JitRequest q;
    q.device = test::pocl_device();
    q.source = salted(r.source);
    q.options = r.options;
    q.entry_points = r.entry_points;
    if (cpu && r.local_size > 0) {  // as the cache asks (service/src/flight.cpp)
        compiler::WarmupLaunch w;
        w.global = {r.local_size, 1, 1};
        w.local = {r.local_size, 1, 1};
        q.warmup = w;
        q.warm_after_reply = !warm_first;
    }
    return q;
}

compiler::JitCompiler make_jit(const std::string& pocl_dir, std::size_t pool) {
    compiler::JitConfig c{test::jit_helper_path(), {"POCL_CACHE_DIR=" + pocl_dir}, {}};
    c.pool_size = pool;
    return compiler::JitCompiler(c);
}

int breakdown(int reps) {
    const InProcess local = InProcess::open();
    if (!local.device) {
        std::printf("no device on platform '%s'\n", test::test_platform_name().c_str());
        return 2;
    }
    const auto pocl_dir = test::make_temp_dir("jit-cost-pocl").string();
    const auto one_shot = make_jit(pocl_dir, 0);
    const auto pooled = make_jit(pocl_dir, 1);
    std::printf("breakdown: medians of %d interleaved rounds, milliseconds; device type %s\n", reps,
                local.cpu ? "CPU (warm-up launch on)" : "GPU (no warm-up launch)");
    std::printf("%-18s %11s %11s %7s %11s %7s %11s %7s\n", "kernel", "in-process", "one-shot",
                "ratio", "pooled", "ratio", "warm-first", "ratio");
    bool primed = false;
    int failures = 0;
    for (const auto& info : kernels::kernels()) {
        auto variant = kernels::make_variant(info.name);
        auto rendered = variant ? kernels::render(*variant)
                                : decltype(kernels::render(*variant))(fail(variant.error()));
        if (!rendered) {
            std::printf("%-18s cannot render\n", info.name.c_str());
            ++failures;
            continue;
        }
        if (!primed) {  // process-wide first-build costs, and the pooled helper's start
            (void)local.build(salted(rendered->source), rendered->options);
            (void)pooled.compile(request_for(*rendered, local.cpu), Clock::now() + 600s);
            pooled.drain();
            primed = true;
        }
        std::vector<double> inproc, with_kernels;
        Phases shot, pool, first;
        for (int i = 0; i < reps; ++i) {
            inproc.push_back(local.build(salted(rendered->source), rendered->options));
            with_kernels.push_back(
                local.build(salted(rendered->source), rendered->options, rendered->entry_points));
            auto a = one_shot.compile(request_for(*rendered, local.cpu), Clock::now() + 600s);
            auto b = pooled.compile(request_for(*rendered, local.cpu), Clock::now() + 600s);
            pooled.drain();  // the warm-up after the answer
            auto c = local.cpu
                         ? pooled.compile(request_for(*rendered, true, true), Clock::now() + 600s)
                         : b;
            if (!a.ok() || !b.ok() || !c.ok() || inproc.back() < 0 || with_kernels.back() < 0) {
                std::printf("%-18s failed: %s\n", info.name.c_str(),
                            !a.ok()   ? a.error().message.c_str()
                            : !b.ok() ? b.error().message.c_str()
                            : !c.ok() ? c.error().message.c_str()
                                      : "in-process build");
                ++failures;
                break;
            }
            shot.add(a->timings);
            pool.add(b->timings);
            first.add(c->timings);
        }
        if (shot.wall.size() != static_cast<std::size_t>(reps)) {
            continue;
        }
        const double base = median(inproc);
        std::printf("%-18s %11.1f %11.1f %6.2fx %11.1f %6.2fx %11.1f %6.2fx\n", info.name.c_str(),
                    base, median(shot.wall), median(shot.wall) / base, median(pool.wall),
                    median(pool.wall) / base, median(first.wall), median(first.wall) / base);
        std::vector<double> paired;  // pooled ÷ in-process within each round
        for (std::size_t i = 0; i < inproc.size(); ++i) {
            paired.push_back(pool.wall[i] / inproc[i]);
        }
        std::printf(
            "    pooled ÷ in-process round by round: median %.2fx (%.2fx to %.2fx); in-process"
            " with a kernel per entry point %.1f (%.2fx the baseline)\n",
            median(paired), *std::min_element(paired.begin(), paired.end()),
            *std::max_element(paired.begin(), paired.end()), median(with_kernels),
            median(with_kernels) / base);
        shot.print("one-shot");
        pool.print("pooled");
        if (local.cpu) {
            first.print("warm-first");
        }
    }
    return failures ? 1 : 0;
}

// The former watchdog: the helper gets the request, is killed at the
// deadline and reaped before the answer. Returns milliseconds past the
// deadline, or < 0 when the helper could not be started or finished early.
double reap_before_answer(const std::string& pocl_dir, const compiler::JitRequest& q,
                          Clock::time_point deadline) {
    compiler::SpawnSpec spec;
    spec.program = test::jit_helper_path();
    spec.env_overrides = {"POCL_CACHE_DIR=" + pocl_dir};
    auto child = compiler::spawn(spec);
    const std::string frame = compiler::encode_request(q);
    if (!child || ::send(child->in.get(), frame.data(), frame.size(), MSG_NOSIGNAL) !=
                      static_cast<ssize_t>(frame.size())) {
        return -1;
    }
    pollfd exited{child->exited.get(), POLLIN, 0};
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (::poll(&exited, 1, static_cast<int>(std::max<long long>(0, left.count()))) != 0) {
        return -1;
    }
    child->child.kill_group();
    (void)child->child.wait();
    return ms(Clock::now() - deadline);
}

int overshoot(int n, int deadline_ms) {
    const auto pocl_dir = test::make_temp_dir("jit-cost-pocl").string();
    const auto one_shot = make_jit(pocl_dir, 0);
    const auto pooled = make_jit(pocl_dir, 1);
    std::vector<double> over[3];
    for (int i = 0; i < 3 * n; ++i) {
        compiler::JitRequest q;
        q.device = test::pocl_device();
        q.source = test::nested_macro_kernel(17) + "// " + std::to_string(next_salt()) + "\n";
        const auto deadline = Clock::now() + std::chrono::milliseconds(deadline_ms);
        double late = -1;
        if (i % 3 == 2) {
            late = reap_before_answer(pocl_dir, q, deadline);
        } else {
            auto r = (i % 3 ? pooled : one_shot).compile(q, deadline);
            late = ms(Clock::now() - deadline);
            late = !r.ok() && r.error().kind == compiler::JitErrc::timeout ? late : -1;
        }
        if (late < 0) {
            std::printf("compile %d did not time out\n", i);
            return 1;
        }
        over[i % 3].push_back(late);
    }
    const char* names[3] = {"one-shot", "pooled", "reap-first (former)"};
    for (int k = 0; k < 3; ++k) {
        std::printf("overshoot past a %d ms deadline, %-19s: median %.1f ms, max %.1f ms (%zu)\n",
                    deadline_ms, names[k], median(over[k]),
                    *std::max_element(over[k].begin(), over[k].end()), over[k].size());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    test::use_private_pocl_cache();
    const std::string mode = argc > 1 ? argv[1] : "";
    const auto arg = [&](int i, int fallback) { return argc > i ? std::atoi(argv[i]) : fallback; };
    if (mode == "breakdown") {
        return breakdown(std::max(1, arg(2, 5)));
    }
    if (mode == "overshoot") {
        return overshoot(std::max(1, arg(2, 20)), std::max(1, arg(3, 2000)));
    }
    std::fprintf(stderr,
                 "usage: jit_cost_bench breakdown [REPS] | jit_cost_bench overshoot [N] "
                 "[DEADLINE_MS]\n");
    return 2;
}
