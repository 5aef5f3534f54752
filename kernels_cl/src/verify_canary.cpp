#include "verify_canary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>

#include "kat_check.hpp"
#include "kcache/cl/kat.hpp"
#include "kcache/cl/program.hpp"
#include "number_text.hpp"

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

// The canary of one variant: source → binary → program from the binary →
// KAT, keeping each check's outputs in `outputs`.
KatResult canary_of(cl_context context, cl_device_id device, const kernels::Variant& variant,
                    const kernels::Rendered& rendered, std::uint32_t seed,
                    std::vector<KatOutput>& outputs) {
    auto built = build_from_source(context, device, rendered);
    if (!built) {
        return {KatState::failed, "build: " + built.error()};
    }
    auto bytes = binary_of(built->get());
    if (!bytes) {
        return {KatState::failed, "binary: " + bytes.error()};
    }
    auto loaded = program_from_binary(context, device, *bytes, rendered.options);
    if (!loaded) {
        return {KatState::failed, "load: " + loaded.error().message};
    }
    return run_kat_keeping(context, device, loaded->get(), variant, seed, &outputs);
}

// How far apart two runs' outputs are: the largest difference and how many
// values lie outside the check's tolerance of each other (the reference's
// scale stands for both), over the checks both runs reached.
struct Apart {
    std::optional<double> max_difference;
    std::size_t outside = 0;
    std::size_t compared = 0;
};

Apart apart(const std::vector<KatOutput>& a, const std::vector<KatOutput>& b) {
    Apart out;
    for (std::size_t c = 0; c < std::min(a.size(), b.size()); ++c) {
        const std::size_t n = std::min({a[c].got.size(), b[c].got.size(), a[c].want.size()});
        for (std::size_t i = 0; i < n; ++i) {
            double d = std::fabs(static_cast<double>(a[c].got[i]) - b[c].got[i]);
            d = std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
            out.max_difference = std::max(out.max_difference.value_or(0.0), d);
            out.outside +=
                kernels::within(a[c].tolerance, a[c].got[i], {b[c].got[i], a[c].want[i].scale}) ? 0
                                                                                                : 1;
            ++out.compared;
        }
    }
    return out;
}

// The differential check of `id`: `previous` loaded on this driver and run
// on the inputs this driver's program ran on (`now`, `now_outputs`).
void differential(cl_context context, cl_device_id device, const kernels::Variant& variant,
                  const kernels::Rendered& rendered, std::uint32_t seed, const KatResult& now,
                  const std::vector<KatOutput>& now_outputs, const PreviousBinary& previous) {
    const std::string id = variant.id();
    const std::string from = "driver " + previous.driver + "'s binary";
    auto loaded = program_from_binary(context, device, previous.bytes, rendered.options);
    if (!loaded) {
        std::cout << id << "\tdifferential\tnot_loaded\t-\t"
                  << one_line(from + " does not load: " + loaded.error().message) << '\n'
                  << std::flush;
        return;
    }
    std::vector<KatOutput> before_outputs;
    const KatResult before =
        run_kat_keeping(context, device, loaded->get(), variant, seed, &before_outputs);
    const Apart d = apart(now_outputs, before_outputs);
    const bool now_right = now.state == KatState::passed;
    const bool before_right = before.state == KatState::passed;
    const char* result = now_right && before_right ? (d.outside == 0 ? "agree" : "both_right")
                         : before_right            ? "new_wrong"
                         : now_right               ? "previous_wrong"
                                                   : "both_wrong";
    const std::string detail = from + " " + (before_right ? "passed" : "failed") + ": " +
                               before.detail + "; " + std::to_string(d.outside) + " of " +
                               std::to_string(d.compared) +
                               " values apart by more than the tolerance";
    std::cout << id << "\tdifferential\t" << result << '\t'
              << (d.max_difference ? number_text(*d.max_difference) : std::string("-")) << '\t'
              << one_line(detail) << '\n'
              << std::flush;
}

void run_one(cl_context context, cl_device_id device, const std::string& id,
             const std::vector<std::string>& extensions, std::uint32_t seed,
             const PreviousBinary* previous) {
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
    std::vector<KatOutput> outputs;
    const KatResult r = canary_of(context, device, *variant, *rendered, seed, outputs);
    say(id, to_string(r.state), r.detail);
    if (previous != nullptr) {
        differential(context, device, *variant, *rendered, seed, r, outputs, *previous);
    }
}

}  // namespace

Result<std::vector<std::optional<PreviousBinary>>, std::string> parse_previous_frames(
    const std::string& in, std::size_t count) {
    std::vector<std::optional<PreviousBinary>> frames;
    std::size_t at = 0;
    for (std::size_t i = 0; i < count; ++i) {
        const std::size_t driver_end = in.find('\n', at);
        const std::size_t size_end =
            driver_end == std::string::npos ? driver_end : in.find('\n', driver_end + 1);
        if (size_end == std::string::npos) {
            return fail("frame " + std::to_string(i + 1) + " of " + std::to_string(count) +
                        " is cut short");
        }
        const std::string size_text = in.substr(driver_end + 1, size_end - driver_end - 1);
        const std::size_t left = in.size() - size_end - 1;
        if (size_text.empty() || size_text.size() > 12 ||
            size_text.find_first_not_of("0123456789") != std::string::npos ||
            std::stoull(size_text) > left) {
            return fail("frame " + std::to_string(i + 1) + " has a bad size \"" + size_text + "\"");
        }
        const std::size_t size = std::stoull(size_text);
        const std::string driver = in.substr(at, driver_end - at);
        if (driver.empty() != (size == 0)) {
            return fail("frame " + std::to_string(i + 1) +
                        " has a driver without bytes or bytes "
                        "without a driver");
        }
        if (size != 0) {
            const auto* b = reinterpret_cast<const std::uint8_t*>(in.data()) + size_end + 1;
            frames.push_back(PreviousBinary{driver, {b, b + size}});
        } else {
            frames.emplace_back();
        }
        at = size_end + 1 + size;
    }
    if (at != in.size()) {
        return fail(std::to_string(in.size() - at) + " bytes follow the last frame");
    }
    return frames;
}

int run_canary_variants(cl_platform_id platform, cl_device_id device,
                        const std::vector<std::string>& variant_ids,
                        const std::vector<std::string>& device_extensions, std::uint32_t seed,
                        const std::vector<std::optional<PreviousBinary>>& previous) {
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                           reinterpret_cast<cl_context_properties>(platform), 0};
    cl_int err = CL_SUCCESS;
    ContextHandle context(clCreateContext(props, 1, &device, nullptr, nullptr, &err));
    for (std::size_t i = 0; i < variant_ids.size(); ++i) {
        const std::string& id = variant_ids[i];
        if (err != CL_SUCCESS) {
            say(id, "failed", failure("clCreateContext", err));
            continue;
        }
        const PreviousBinary* earlier =
            i < previous.size() && previous[i] ? &*previous[i] : nullptr;
        run_one(context.get(), device, id, device_extensions, seed, earlier);
    }
    return 0;
}

}  // namespace kcache::cl
