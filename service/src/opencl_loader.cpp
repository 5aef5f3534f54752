// The OpenCL loader (loader.hpp): the only file of the service that calls
// the OpenCL runtime (the public Program type releases its own reference).

#include <span>
#include <vector>

#include "kcache/cl/program.hpp"
#include "kcache/common/cl_error.hpp"
#include "kcache/common/hot_path.hpp"
#include "kcache/service/loader.hpp"

namespace kcache::service {
namespace {

class OpenClLoader final : public Loader {
  public:
    Result<device_db::DeviceIdentity, LoaderError> identify(cl_device_id device) override {
        auto id = device_db::probe(device);
        if (!id) {
            return fail(LoaderError{LoaderErrc::query_failed,
                                    "cannot identify the device: " + id.error().message});
        }
        return std::move(*id);
    }

    bool is_root_device(cl_device_id device) override {
        cl_device_id parent = nullptr;
        return clGetDeviceInfo(device, CL_DEVICE_PARENT_DEVICE, sizeof(parent), &parent, nullptr) ==
                   CL_SUCCESS &&
               parent == nullptr;
    }

    KCACHE_HOT_PATH cl_platform_id platform_of(cl_device_id device) override {
        cl_platform_id platform = nullptr;
        if (clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof(platform), &platform, nullptr) !=
            CL_SUCCESS) {
            return nullptr;
        }
        return platform;
    }

    bool device_in_context(cl_context context, cl_device_id device, std::string& why) override;

    KCACHE_HOT_PATH Result<cl::ProgramHandle, LoaderError> load(
        cl_context context, cl_device_id device, std::span<const std::uint8_t> bytes,
        const std::string& options) override {
        auto program = cl::program_from_binary(context, device, bytes, options);
        if (!program) {
            return fail(LoaderError{LoaderErrc::rejected, program.error().message});
        }
        return std::move(*program);
    }

    Result<std::vector<std::uint8_t>, LoaderError> binary_of(cl_program program) override;

    KCACHE_HOT_PATH std::uint32_t context_references(cl_context context) override {
        cl_uint n = 0;
        if (clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof(n), &n, nullptr) !=
            CL_SUCCESS) {
            return 0;
        }
        return n;
    }

    bool counts_programs(cl_context context) override;

    KCACHE_HOT_PATH cl::ContextHandle retain(cl_context context) override {
        cl::ContextHandle held;
        if (clRetainContext(context) == CL_SUCCESS) {
            held.reset(context);
        }
        return held;
    }

    KCACHE_HOT_PATH cl_program retain(cl_program program) override {
        clRetainProgram(program);
        return program;
    }
};

KCACHE_HOT_PATH bool OpenClLoader::device_in_context(cl_context context, cl_device_id device,
                                                     std::string& why) {
    // Most contexts hold one device: one query and no allocation for up to
    // eight; more are asked for again with room for all.
    cl_device_id few[8];
    std::size_t size = 0;
    cl_int err = clGetContextInfo(context, CL_CONTEXT_DEVICES, sizeof(few), few, &size);
    std::vector<cl_device_id> many;
    if (err == CL_INVALID_VALUE) {  // more than eight: the size alone, then the list
        err = clGetContextInfo(context, CL_CONTEXT_DEVICES, 0, nullptr, &size);
        many.resize(size / sizeof(cl_device_id));
        err = err != CL_SUCCESS || many.empty()
                  ? (err != CL_SUCCESS ? err : CL_INVALID_VALUE)
                  : clGetContextInfo(context, CL_CONTEXT_DEVICES, size, many.data(), nullptr);
    }
    if (err != CL_SUCCESS || size < sizeof(cl_device_id)) {
        why = std::string("clGetContextInfo(CL_CONTEXT_DEVICES) failed (") + cl_error_name(err) +
              "): invalid context?";
        return false;
    }
    const std::span<const cl_device_id> devices =
        many.empty() ? std::span<const cl_device_id>(few, size / sizeof(cl_device_id))
                     : std::span<const cl_device_id>(many);
    for (auto d : devices) {
        if (d == device) {
            return true;
        }
    }
    why = "the device does not belong to the context";
    return false;
}

Result<std::vector<std::uint8_t>, LoaderError> OpenClLoader::binary_of(cl_program program) {
    std::size_t size = 0;
    cl_int err = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr);
    if (err != CL_SUCCESS || size == 0) {
        return fail(LoaderError{LoaderErrc::query_failed,
                                "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES) failed"});
    }
    std::vector<std::uint8_t> bytes(size);
    unsigned char* data = bytes.data();
    err = clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(data), &data, nullptr);
    if (err != CL_SUCCESS) {
        return fail(
            LoaderError{LoaderErrc::query_failed, "clGetProgramInfo(CL_PROGRAM_BINARIES) failed"});
    }
    return bytes;
}

// Whether creating a program on `context` raises its reference count by one
// and releasing it lowers it again (three tries, since other threads may
// retain or release the context meanwhile).
bool OpenClLoader::counts_programs(cl_context context) {
    static const char* kSource = "kernel void kcache_probe(void) {}";
    for (int attempt = 0; attempt < 3; ++attempt) {
        cl_int err = CL_SUCCESS;
        const cl_uint before = context_references(context);
        cl::ProgramHandle probe(clCreateProgramWithSource(context, 1, &kSource, nullptr, &err));
        if (!probe || err != CL_SUCCESS) {
            return false;
        }
        const cl_uint during = context_references(context);
        probe.reset();
        const cl_uint after = context_references(context);
        if (before > 0 && during == before + 1 && after == before) {
            return true;
        }
        if (during == before && after == before) {
            return false;
        }
    }
    return false;
}

}  // namespace

std::unique_ptr<Loader> opencl_loader() {
    return std::make_unique<OpenClLoader>();
}

}  // namespace kcache::service
