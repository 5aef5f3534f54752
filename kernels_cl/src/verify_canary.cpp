#include "verify_canary.hpp"

#include <iostream>

#include "kcache/cl/kat.hpp"
#include "kcache/cl/program.hpp"

namespace kcache::cl {
namespace {

// `text` on one line without tabs (the reply's grammar).
std::string one_line(std::string text) {
    for (char& c : text) {
        c = c == '\t' || c == '\n' || c == '\r' ? ' ' : c;
    }
    return text;
}

void say(const std::string& id, const char* state, const std::string& detail) {
    std::cout << id << '\t' << state << '\t' << one_line(detail) << '\n' << std::flush;
}

// Builds `rendered` from source for `device`; error: the failing step and build log.
Result<ProgramHandle, std::string> build_from_source(cl_context context, cl_device_id device,
                                                     const kernels::Rendered& rendered) {
    const char* text = rendered.source.c_str();
    const std::size_t length = rendered.source.size();
    cl_int err = CL_SUCCESS;
    ProgramHandle program(clCreateProgramWithSource(context, 1, &text, &length, &err));
    if (err != CL_SUCCESS) {
        return fail(failure("clCreateProgramWithSource", err));
    }
    err = clBuildProgram(program.get(), 1, &device, rendered.options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
        return fail(failure("clBuildProgram", err) + ": " + build_log(program.get(), device));
    }
    return program;
}

// The binary the driver made of `program` for its one device.
Result<std::vector<std::uint8_t>, std::string> binary_of(cl_program program) {
    std::size_t size = 0;
    cl_int err = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr);
    if (err != CL_SUCCESS || size == 0) {
        return fail(failure("clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)", err));
    }
    std::vector<std::uint8_t> bytes(size);
    unsigned char* out = bytes.data();
    err = clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof out, &out, nullptr);
    if (err != CL_SUCCESS) {
        return fail(failure("clGetProgramInfo(CL_PROGRAM_BINARIES)", err));
    }
    return bytes;
}

// The canary of one variant: source → binary → program from the binary → KAT.
void run_one(cl_context context, cl_device_id device, const std::string& id,
             const std::vector<std::string>& extensions, std::uint32_t seed) {
    auto variant = kernels::parse_variant(id);
    if (!variant) {
        return say(id, "unsupported", variant.error().message);
    }
    if (auto supported = kernels::check_support(*variant, extensions); !supported) {
        return say(id, "unsupported", supported.error().message);
    }
    auto rendered = kernels::render(*variant);
    if (!rendered || !has_kat(variant->kernel)) {
        return say(id, "unsupported", "no known-answer test for " + id);
    }
    auto built = build_from_source(context, device, *rendered);
    if (!built) {
        return say(id, "failed", "build: " + built.error());
    }
    auto bytes = binary_of(built->get());
    if (!bytes) {
        return say(id, "failed", "binary: " + bytes.error());
    }
    auto loaded = program_from_binary(context, device, *bytes, rendered->options);
    if (!loaded) {
        return say(id, "failed", "load: " + loaded.error());
    }
    const KatResult r = run_kat(context, device, loaded->get(), *variant, seed);
    say(id, to_string(r.state), r.detail);
}

}  // namespace

int run_canary_variants(cl_platform_id platform, cl_device_id device,
                        const std::vector<std::string>& variant_ids,
                        const std::vector<std::string>& device_extensions, std::uint32_t seed) {
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                           reinterpret_cast<cl_context_properties>(platform), 0};
    cl_int err = CL_SUCCESS;
    ContextHandle context(clCreateContext(props, 1, &device, nullptr, nullptr, &err));
    for (const std::string& id : variant_ids) {
        if (err != CL_SUCCESS) {
            say(id, "failed", failure("clCreateContext", err));
            continue;
        }
        run_one(context.get(), device, id, device_extensions, seed);
    }
    return 0;
}

}  // namespace kcache::cl
