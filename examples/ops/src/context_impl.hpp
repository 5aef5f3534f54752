#pragma once
// Context::Impl: the device, its queue and the cache behind a Context, and
// `dispatch`, the one place that decides between the device and the CPU path.

#include <map>
#include <string>
#include <utility>

#include "kcache/cl/device_run.hpp"
#include "kcache/cl/handles.hpp"
#include "ops/ops.hpp"

namespace ops {

// A program kcache gave (or did not) and the path that follows from it.
struct Acquired {
    kcache::Program program;
    Path path;
};

// A registry kernel to ask kcache for, and the local size it is built with.
struct KernelChoice {
    kcache::KernelRequest request;
    std::size_t local_size = 0;
};

struct Context::Impl {
    Options options;
    cl_device_id device = nullptr;  // a root device: not reference counted
    std::string device_name;
    kcache::cl::ContextHandle context;
    kcache::cl::QueueHandle queue;
    std::unique_ptr<kcache::Cache> cache;  // declared last: released before the queue and context
    Path ready;                            // the device path, or the CPU fallback every op takes

    // Returns the request for `kernel` with `params` (the kernel's preferred
    // local size added as "ls"), under this context's deadline and mode.
    KernelChoice choose(const std::string& kernel, std::map<std::string, std::string> params) const;
    // Asks kcache for `request`'s program; a CPU path with kcache's reason when none comes.
    Acquired acquire(const kcache::KernelRequest& request) const;
};

// Runs an op on the device when kcache gives a program for `choice` and every
// OpenCL step of `on_device(kcache::cl::DeviceRun&)` succeeds; otherwise runs
// `on_cpu()`. The output's path says which ran and why.
template <class Out, class OnDevice, class OnCpu>
Out dispatch(const Context::Impl& ctx, const KernelChoice& choice, OnDevice&& on_device,
             OnCpu&& on_cpu) {
    Acquired got = ctx.acquire(choice.request);
    if (got.program.ok()) {
        std::string failure;
        {
            kcache::cl::DeviceRun run(ctx.context.get(), ctx.queue.get(), got.program.get(),
                                      choice.local_size);
            Out out = on_device(run);
            if (run.ok()) {
                out.path = std::move(got.path);
                return out;
            }
            failure = run.error();
        }
        got.path.backend = Backend::cpu;
        got.path.fallback = Fallback::launch_failed;
        got.path.message = std::move(failure);
    }
    Out out = on_cpu();
    out.path = std::move(got.path);
    return out;
}

}  // namespace ops
