// An ordinary OpenCL application that builds the way real ones do when
// they are busy, run by the layer's robustness tests with and without the
// layer (it links no kcache code):
//   threads N    N threads build one source at once; prints built=K.
//   fork         builds, forks, the child builds another program (and
//                exits within 30 s or is killed by its alarm); prints
//                child=exit N|signal N|hung, then the parent builds and runs
//                a third: run=VALUE.
//   stress R     R rounds of: a new context, 4 threads × 2 builds (one
//                source shared by all threads, one of each thread's own),
//                each program run once, then a fork whose child builds, the
//                context released; prints rounds=R, failed=F and one
//                "failure: …" line per failure.
// Exits 0 when it ran to the end (the verdicts are in what it printed).

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kcache/opencl.h"

namespace {

const char* kSource = "__kernel void scale(__global float* x) { x[get_global_id(0)] *= VAL; }\n";

std::mutex g_print;
void failure(const std::string& what) {
    std::lock_guard lock(g_print);
    std::printf("failure: %s\n", what.c_str());
    std::fflush(stdout);
}

struct Cl {
    cl_device_id device = nullptr;
    cl_context context = nullptr;
};

Cl open_context() {
    Cl cl;
    cl_platform_id platform = nullptr;
    if (clGetPlatformIDs(1, &platform, nullptr) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &cl.device, nullptr) != CL_SUCCESS) {
        return cl;
    }
    cl_int err = CL_SUCCESS;
    cl.context = clCreateContext(nullptr, 1, &cl.device, nullptr, nullptr, &err);
    return cl;
}

// A program of kSource built with VAL=`val`, or null after a failure line.
cl_program build(const Cl& cl, int val) {
    cl_int err = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(cl.context, 1, &kSource, nullptr, &err);
    const std::string options = "-DVAL=" + std::to_string(val);
    if (err == CL_SUCCESS) {
        err = clBuildProgram(p, 1, &cl.device, options.c_str(), nullptr, nullptr);
    }
    if (err != CL_SUCCESS) {
        failure("build " + options + ": " + std::to_string(err));
        if (p != nullptr) {
            clReleaseProgram(p);
        }
        return nullptr;
    }
    return p;
}

// Runs `p` over 16 values of 2.0; returns the first result, or -1.
float run(const Cl& cl, cl_program p) {
    cl_int err = CL_SUCCESS;
    cl_kernel k = clCreateKernel(p, "scale", &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(cl.context, cl.device, nullptr, &err);
    std::vector<float> x(16, 2.0f);
    cl_mem buf = clCreateBuffer(cl.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                x.size() * sizeof(float), x.data(), &err);
    const size_t n = x.size();
    err = err == CL_SUCCESS ? clSetKernelArg(k, 0, sizeof buf, &buf) : err;
    err = err == CL_SUCCESS
              ? clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr)
              : err;
    err = err == CL_SUCCESS ? clEnqueueReadBuffer(q, buf, CL_TRUE, 0, n * sizeof(float), x.data(),
                                                  0, nullptr, nullptr)
                            : err;
    clReleaseMemObject(buf);
    clReleaseCommandQueue(q);
    clReleaseKernel(k);
    return err == CL_SUCCESS ? x[0] : -1.0f;
}

// A child that builds program VAL=`val` and exits (no kernel runs: the
// driver's worker threads are the parent's); how it ended, within 40 s.
std::string fork_and_build(const Cl& cl, int val) {
    std::fflush(stdout);
    const pid_t child = ::fork();
    if (child == 0) {
        ::alarm(30);
        cl_program p = build(cl, val);
        std::fflush(stdout);
        ::_exit(p != nullptr ? 0 : 1);
    }
    int status = 0;
    for (int i = 0; i < 4000; ++i) {
        if (::waitpid(child, &status, WNOHANG) == child) {
            return WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                     : "signal " + std::to_string(WTERMSIG(status));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    return "hung";
}

int threads(const Cl& cl, int n) {
    std::atomic<int> built{0};
    std::vector<std::thread> all;
    for (int i = 0; i < n; ++i) {
        all.emplace_back([&] {
            if (cl_program p = build(cl, 3)) {
                built++;
                clReleaseProgram(p);
            }
        });
    }
    for (auto& t : all) {
        t.join();
    }
    std::printf("built=%d\n", built.load());
    return 0;
}

int fork_mode(const Cl& cl) {
    cl_program first = build(cl, 2);
    std::printf("child=%s\n", fork_and_build(cl, 4).c_str());
    cl_program third = build(cl, 5);
    std::printf("run=%g\n", third != nullptr ? run(cl, third) : -1.0f);
    for (cl_program p : {first, third}) {
        if (p != nullptr) {
            clReleaseProgram(p);
        }
    }
    return 0;
}

// One round: see the top of the file. Returns the failures it printed.
int round_of(int round) {
    Cl cl = open_context();
    if (cl.context == nullptr) {
        failure("round " + std::to_string(round) + ": no context");
        return 1;
    }
    std::atomic<int> failed{0};
    std::vector<std::thread> all;
    for (int t = 0; t < 4; ++t) {
        all.emplace_back([&, t] {
            for (int val : {7, 10 + t}) {
                cl_program p = build(cl, val);
                const float got = p != nullptr ? run(cl, p) : -1.0f;
                if (got != 2.0f * static_cast<float>(val)) {
                    failure("round " + std::to_string(round) + " VAL=" + std::to_string(val) +
                            ": got " + std::to_string(got));
                    failed++;
                }
                if (p != nullptr) {
                    clReleaseProgram(p);
                }
            }
        });
    }
    for (auto& t : all) {
        t.join();
    }
    // After the builds: a fork while one of the driver's own builds runs
    // hangs the child without kcache too (the driver's locks).
    const std::string child = fork_and_build(cl, 20 + round);
    if (child != "exit 0") {
        failure("round " + std::to_string(round) + ": forked child " + child);
        failed++;
    }
    clReleaseContext(cl.context);
    return failed.load();
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc >= 2 ? argv[1] : "";
    const int n = argc == 3 ? std::atoi(argv[2]) : 0;
    if (mode == "stress" && n > 0) {
        int failed = 0;
        for (int r = 0; r < n; ++r) {
            failed += round_of(r);
        }
        std::printf("rounds=%d\nfailed=%d\n", n, failed);
        return 0;
    }
    Cl cl = open_context();
    if (cl.context == nullptr || !((mode == "threads" && n > 0) || (mode == "fork" && argc == 2))) {
        std::fprintf(stderr,
                     "usage: layer_stress threads N | fork | stress ROUNDS (needs an "
                     "OpenCL device)\n");
        return 2;
    }
    const int rc = mode == "threads" ? threads(cl, n) : fork_mode(cl);
    clReleaseContext(cl.context);
    return rc;
}
