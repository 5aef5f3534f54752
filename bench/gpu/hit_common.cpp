#include "hit_common.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kcache/device_db/identity.hpp"
#include "kcache/store/store.hpp"

namespace gpu_bench {

double us_since(Clock::time_point t0) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

Ctx::Ctx(const Device& d) {
    cl_int err = CL_SUCCESS;
    c = clCreateContext(nullptr, 1, &d.device, nullptr, nullptr, &err);
    static const char* evict_env = std::getenv("GPU_BENCH_EVICT_MB");
    static std::vector<char> junk(
        evict_env ? static_cast<std::size_t>(std::max(0, std::atoi(evict_env))) << 20 : 0);
    for (std::size_t i = 0; i < junk.size(); i += 64) {
        junk[i]++;
    }
}
Ctx::~Ctx() {
    if (c != nullptr) {
        clReleaseContext(c);
    }
}

kcache::kernels::Rendered rendered(const std::string& kernel) {
    return *kcache::kernels::render(*kcache::kernels::make_variant(kernel));
}

kcache::device_db::CompileInput input_of(const std::string& kernel) {
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

double floor_us(const Device& d, cl_context ctx, const Bytes& bytes, const std::string& options,
                double* create_us) {
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

double read_floor_us(const Device& d, cl_context ctx, const std::filesystem::path& file,
                     const std::string& options, double* load_us) {
    const auto t0 = Clock::now();
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || ::fstat(fd, &st) != 0) {
        if (fd >= 0) {
            ::close(fd);
        }
        return -1;
    }
    Bytes bytes(static_cast<std::size_t>(st.st_size));
    const bool read_all = ::read(fd, bytes.data(), bytes.size()) == st.st_size;
    ::close(fd);
    const double load = read_all ? floor_us(d, ctx, bytes, options) : -1;
    if (load_us != nullptr) {
        *load_us = load;
    }
    return load < 0 ? -1 : us_since(t0);
}

Bytes stored_bytes(const Device& d, const std::filesystem::path& dir, const std::string& kernel) {
    auto cache = open_at(dir, false);
    auto p = cache ? cache->program(d.context, d.device, request_of(kernel)) : kcache::Program();
    if (!p.ok()) {
        std::printf("%s: %s\n", kernel.c_str(), p.outcome().message.c_str());
        return {};
    }
    auto id = kcache::device_db::probe(d.device);
    auto store = kcache::store::Store::open(dir);
    auto e = store->get(kcache::device_db::jit_key_fields(*id, input_of(kernel)));
    return e ? e->bytes : Bytes{};
}

std::string self_path() {
    char buf[4096] = {};
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

double child_us(const std::string& args, double* part, double* third) {
    const std::string cmd = "'" + self_path() + "' " + args;
    FILE* f = ::popen(cmd.c_str(), "r");
    if (f == nullptr) {
        return -1;
    }
    double us = -1, second = -1, last = -1;
    const int got = std::fscanf(f, "%lf %lf %lf", &us, &second, &last);
    if (got < 1) {
        us = -1;
    }
    if (part != nullptr) {
        *part = got >= 2 ? second : -1;
    }
    if (third != nullptr) {
        *third = got == 3 ? last : -1;
    }
    return ::pclose(f) == 0 ? us : -1;
}

std::filesystem::path bytes_file(const std::filesystem::path& dir, const std::string& kernel,
                                 const Bytes& bytes) {
    const auto file = dir / (kernel + ".bin");
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    return file;
}

void rotate(const std::function<void()>* arms, int n) {
    for (int i = 0; i < kSamples; ++i) {
        for (int j = 0; j < n; ++j) {
            arms[(i + j) % n]();
        }
    }
}

}  // namespace gpu_bench
