// gpu_bench long-lived, section 1b, and gpu_bench hit-parts: where a
// resident hit's time over the driver floor goes.

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "driver_timeline.hpp"
#include "hit_common.hpp"

namespace gpu_bench {
namespace {

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
// clBuildProgram; and along every driver call it makes. "own" is kcache's
// own time in all: the hit less every driver call it made.
}  // namespace

void hit_parts(const Device& d, const std::filesystem::path& dir) {
    std::printf(
        "\n1b. resident hit over the floor, new context per sample (%d samples, medians, µs)\n",
        kSamples);
    std::printf("%-16s %9s %9s %11s %11s %9s %9s %9s %9s\n", "kernel", "floor", "resident",
                "floor+calls", "warmed hit", "before", "driver", "after", "own");
    for (const auto& k : kcache::kernels::kernels()) {
        const Bytes bytes = stored_bytes(d, dir, k.name);
        if (bytes.empty()) {
            continue;
        }
        const std::string options = rendered(k.name).options;
        auto cache = open_at(dir, true);
        Ctx kept(d);
        (void)cache->program(kept.c, d.device, request_of(k.name));
        const kcache::KernelRequest request = request_of(k.name);
        std::vector<double> t[4], parts[4];
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
            std::int64_t start = 0, end = 0;
            kcache::Program p;
            {
                const TimelineRecording recording(warm ? nullptr : &timeline);
                start = now_ns();
                const auto t0 = Clock::now();
                p = cache->program(ctx.c, d.device, request);
                out.push_back(us_since(t0));
                end = now_ns();
            }
            if (!warm) {  // the cold hit split at the driver's calls
                std::int64_t in = 0, left = 0, last = start, driver = 0;
                std::vector<double> step;
                std::vector<const char*> names;
                for (const auto& st : timeline) {
                    step.push_back(static_cast<double>(st.entered - last) / 1000.0);
                    step.push_back(static_cast<double>(st.left - st.entered) / 1000.0);
                    names.push_back(st.call);
                    driver += st.left - st.entered;
                    last = st.left;
                    in = std::string(st.call) == "clCreateProgramWithBinary" ? st.entered : in;
                    left = std::string(st.call) == "clBuildProgram" ? st.left : left;
                }
                step.push_back(static_cast<double>(end - last) / 1000.0);
                parts[0].push_back(static_cast<double>(in - start) / 1000.0);
                parts[1].push_back(static_cast<double>(left - in) / 1000.0);
                parts[2].push_back(static_cast<double>(end - left) / 1000.0);
                parts[3].push_back(static_cast<double>(end - start - driver) / 1000.0);
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
        rotate(arms, 4);
        std::printf("%-16s %9.1f %9.1f %11.1f %11.1f %9.1f %9.1f %9.1f %9.1f%s\n", k.name.c_str(),
                    median(t[0]), median(t[1]), median(t[2]), median(t[3]), median(parts[0]),
                    median(parts[1]), median(parts[2]), median(parts[3]),
                    wrong ? "  (WRONG RUNG OR FAILURE)" : "");
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

int hit_parts_only(const Device& d, const std::filesystem::path& root) {
    const auto dir = root / "long-lived";
    std::filesystem::create_directories(dir);
    hit_parts(d, dir);
    return 0;
}

}  // namespace gpu_bench
