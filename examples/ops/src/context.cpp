// Context: the first OpenCL device (or none), an in-order queue, and the cache.

#include <vector>

#include "context_impl.hpp"
#include "kcache/cl/launch.hpp"
#include "kcache/cl/program.hpp"

namespace ops {
namespace {

Path cpu_path(Fallback why, std::string message) {
    Path p;
    p.backend = Backend::cpu;
    p.fallback = why;
    p.message = std::move(message);
    return p;
}

// Returns the first device of the first platform that has one, or nullptr.
cl_device_id first_device() {
    cl_uint count = 0;
    if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0) {
        return nullptr;
    }
    std::vector<cl_platform_id> platforms(count);
    if (clGetPlatformIDs(count, platforms.data(), nullptr) != CL_SUCCESS) {
        return nullptr;
    }
    for (cl_platform_id platform : platforms) {
        cl_device_id device = nullptr;
        if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS &&
            device != nullptr) {
            return device;
        }
    }
    return nullptr;
}

std::string name_of(cl_device_id device) {
    std::size_t size = 0;
    if (clGetDeviceInfo(device, CL_DEVICE_NAME, 0, nullptr, &size) != CL_SUCCESS || size == 0) {
        return "unnamed device";
    }
    std::string name(size, '\0');
    if (clGetDeviceInfo(device, CL_DEVICE_NAME, size, name.data(), nullptr) != CL_SUCCESS) {
        return "unnamed device";
    }
    while (!name.empty() && name.back() == '\0') {
        name.pop_back();
    }
    return name;
}

// Opens the device, its context and an in-order queue; "" or why not.
std::string open_device(Context::Impl& impl) {
    cl_device_id device = first_device();
    if (device == nullptr) {
        return "no OpenCL device found";
    }
    cl_int err = CL_SUCCESS;
    kcache::cl::ContextHandle context(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err));
    if (err != CL_SUCCESS) {
        return kcache::cl::failure("clCreateContext", err);
    }
    kcache::cl::QueueHandle queue(
        clCreateCommandQueueWithProperties(context.get(), device, nullptr, &err));
    if (err != CL_SUCCESS) {
        return kcache::cl::failure("clCreateCommandQueueWithProperties", err);
    }
    impl.device = device;
    impl.device_name = name_of(device);
    impl.context = std::move(context);
    impl.queue = std::move(queue);
    return {};
}

}  // namespace

const char* to_string(Backend backend) {
    return backend == Backend::device ? "device" : "cpu";
}

const char* to_string(Fallback fallback) {
    switch (fallback) {
        case Fallback::none:
            return "none";
        case Fallback::no_device:
            return "no_device";
        case Fallback::cache_unavailable:
            return "cache_unavailable";
        case Fallback::not_built:
            return "not_built";
        case Fallback::launch_failed:
            return "launch_failed";
    }
    return "unknown";
}

std::string Path::describe() const {
    const std::string first_line = message.substr(0, message.find('\n'));
    if (backend == Backend::device) {
        return std::string("device (kcache: ") + kcache::to_string(rung) + ")";
    }
    std::string s = std::string("cpu (fallback ") + to_string(fallback);
    if (status) {
        s += std::string(": kcache ") + kcache::to_string(*status);
        if (rung != kcache::Rung::none) {
            s += std::string(" at ") + kcache::to_string(rung);
        }
    }
    return first_line.empty() ? s + ")" : s + ": " + first_line + ")";
}

Context::Context(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Context::Context(Context&& other) noexcept = default;
Context& Context::operator=(Context&& other) noexcept = default;
Context::~Context() = default;

Context Context::create(const Options& options) {
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    if (options.device == DevicePolicy::cpu_only) {
        impl->ready = cpu_path(Fallback::no_device, "the context was created cpu_only");
        return Context(std::move(impl));
    }
    if (std::string why = open_device(*impl); !why.empty()) {
        impl->ready = cpu_path(Fallback::no_device, why);
        return Context(std::move(impl));
    }
    kcache::Outcome opened;
    impl->cache = options.cache_config ? kcache::Cache::open(*options.cache_config, &opened)
                                       : kcache::Cache::open_default(&opened);
    if (!impl->cache) {
        impl->ready = cpu_path(Fallback::cache_unavailable, opened.message);
        impl->ready.status = opened.status;
        return Context(std::move(impl));
    }
    impl->ready.backend = Backend::device;
    impl->ready.fallback = Fallback::none;
    return Context(std::move(impl));
}

bool Context::has_device() const {
    return impl_->device != nullptr;
}

std::string Context::device_name() const {
    return impl_->device_name;
}

const Path& Context::readiness() const {
    return impl_->ready;
}

void Context::wait_for_background(std::chrono::milliseconds limit) {
    if (impl_->cache) {
        impl_->cache->drain(limit);
    }
}

KernelChoice Context::Impl::choose(const std::string& kernel,
                                   std::map<std::string, std::string> params) const {
    KernelChoice choice;
    // The variant kcache builds for these parameters decides the local size the
    // launchers use; an invalid choice leaves it 0 and kcache reports why.
    if (auto variant = kcache::kernels::make_variant(kernel, {params.begin(), params.end()})) {
        if (auto local_size = kcache::cl::variant_local_size(*variant)) {
            choice.local_size = *local_size;
        }
    }
    choice.request.kernel = kernel;
    choice.request.params = std::move(params);
    choice.request.deadline = options.deadline;
    choice.request.mode = options.mode;
    return choice;
}

Acquired Context::Impl::acquire(const kcache::KernelRequest& request) const {
    Acquired got;
    got.path = ready;
    if (ready.backend != Backend::device) {
        return got;
    }
    got.program = cache->program(context.get(), device, request);
    const kcache::Outcome& outcome = got.program.outcome();
    got.path.status = outcome.status;
    got.path.rung = outcome.rung;
    got.path.message = outcome.message;
    if (!got.program.ok()) {
        got.path.backend = Backend::cpu;
        got.path.fallback = Fallback::not_built;
    }
    return got;
}

}  // namespace ops
