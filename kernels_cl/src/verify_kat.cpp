// A caller's known-answer test, read from its KAT file (grammar in
// verify_kat.hpp) and run on the binary kcache serves.

#include "verify_kat.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "kcache/cl/handles.hpp"
#include "kcache/cl/program.hpp"
#include "number_text.hpp"

namespace kcache::cl {
namespace {

using nlohmann::json;

struct Invalid {
    std::string what;
};

enum class Type { f32, i32, u32 };

// One argument as the kernel gets it.
struct Arg {
    enum class Kind { scalar, buffer, local } kind = Kind::scalar;
    Type type = Type::f32;
    std::vector<double> in;        // scalar: one value; buffer: initial contents
    std::vector<double> expected;  // output buffers only
    std::size_t count = 0;         // buffer elements; local: bytes
    bool output = false;
};

struct Kat {
    std::string kernel;
    std::vector<std::size_t> global, local;
    std::vector<Arg> args;
    double abs = 0, rel = 0;
};

void check_keys(const json& j, const std::set<std::string>& allowed, const std::string& where) {
    if (!j.is_object()) {
        throw Invalid{where + ": expected an object"};
    }
    for (const auto& [key, value] : j.items()) {
        if (!allowed.count(key)) {
            throw Invalid{where + ": unknown key '" + key + "'"};
        }
    }
}

std::vector<double> numbers(const json& j, const std::string& where) {
    if (!j.is_array()) {
        throw Invalid{where + ": expected an array of numbers"};
    }
    std::vector<double> out;
    for (const json& v : j) {
        if (!v.is_number()) {
            throw Invalid{where + ": expected numbers only"};
        }
        out.push_back(v.get<double>());
    }
    return out;
}

std::vector<std::size_t> dims(const json& j, const std::string& where) {
    std::vector<std::size_t> out;
    for (double v : numbers(j, where)) {
        if (v < 1 || v != std::floor(v) || v > 1e9) {
            throw Invalid{where + ": expected positive integers"};
        }
        out.push_back(static_cast<std::size_t>(v));
    }
    if (out.empty() || out.size() > 3) {
        throw Invalid{where + ": expected 1 to 3 dimensions"};
    }
    return out;
}

Type type_of(const json& j, const std::string& where) {
    const std::string t = j.is_string() ? j.get<std::string>() : "";
    if (t == "f32" || t == "i32" || t == "u32") {
        return t == "f32" ? Type::f32 : t == "i32" ? Type::i32 : Type::u32;
    }
    throw Invalid{where + ": expected \"f32\", \"i32\" or \"u32\""};
}

Arg arg_of(const json& a, const std::string& where) {
    check_keys(a, {"scalar", "value", "buffer", "in", "count", "expected", "local"}, where);
    Arg arg;
    if (a.contains("local")) {
        arg.kind = Arg::Kind::local;
        arg.count = dims(json::array({a["local"]}), where + ".local")[0];
    } else if (a.contains("scalar")) {
        arg.type = type_of(a["scalar"], where + ".scalar");
        arg.in = numbers(json::array({a.value("value", json())}), where + ".value");
    } else if (a.contains("buffer")) {
        arg.kind = Arg::Kind::buffer;
        arg.type = type_of(a["buffer"], where + ".buffer");
        arg.in = a.contains("in") ? numbers(a["in"], where + ".in") : std::vector<double>{};
        arg.output = a.contains("expected");
        arg.expected = arg.output ? numbers(a["expected"], where + ".expected") : arg.expected;
        arg.count = arg.output ? dims(json::array({a.value("count", json())}), where + ".count")[0]
                               : arg.in.size();
        if (arg.count == 0 || (arg.output && arg.expected.size() != arg.count) ||
            (!arg.in.empty() && arg.in.size() != arg.count)) {
            throw Invalid{where + ": 'in' and 'expected' must hold 'count' values, at least one"};
        }
    } else {
        throw Invalid{where + ": expected one of 'scalar', 'buffer' or 'local'"};
    }
    return arg;
}

Kat parse(const std::string& text) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {
        throw Invalid{std::string("not JSON: ") + e.what()};
    }
    check_keys(j, {"format", "kernel", "global", "local", "args", "tolerance"}, "kat");
    if (j.value("format", 0) != 1) {
        throw Invalid{"kat.format: expected 1"};
    }
    Kat kat;
    kat.kernel = j.value("kernel", "");
    if (kat.kernel.empty()) {
        throw Invalid{"kat.kernel: expected the entry point's name"};
    }
    kat.global = dims(j.value("global", json()), "kat.global");
    if (j.contains("local")) {
        kat.local = dims(j["local"], "kat.local");
        if (kat.local.size() != kat.global.size()) {
            throw Invalid{"kat.local: expected as many dimensions as kat.global"};
        }
    }
    if (!j.contains("args") || !j["args"].is_array()) {
        throw Invalid{"kat.args: expected an array"};
    }
    for (std::size_t i = 0; i < j["args"].size(); ++i) {
        kat.args.push_back(arg_of(j["args"][i], "kat.args[" + std::to_string(i) + "]"));
    }
    if (j.contains("tolerance")) {
        check_keys(j["tolerance"], {"abs", "rel"}, "kat.tolerance");
        kat.abs = numbers(json::array({j["tolerance"].value("abs", 0.0)}), "kat.tolerance.abs")[0];
        kat.rel = numbers(json::array({j["tolerance"].value("rel", 0.0)}), "kat.tolerance.rel")[0];
    }
    return kat;
}

// `values` as `type` elements (4 bytes each).
std::vector<std::uint8_t> encode(Type type, const std::vector<double>& values, std::size_t count) {
    std::vector<std::uint8_t> bytes(count * 4);
    for (std::size_t i = 0; i < values.size() && i < count; ++i) {
        const float f = static_cast<float>(values[i]);
        const std::int32_t s = static_cast<std::int32_t>(values[i]);
        const std::uint32_t u = static_cast<std::uint32_t>(values[i]);
        std::memcpy(bytes.data() + 4 * i,
                    type == Type::f32   ? static_cast<const void*>(&f)
                    : type == Type::i32 ? static_cast<const void*>(&s)
                                        : static_cast<const void*>(&u),
                    4);
    }
    return bytes;
}

double decode(Type type, const std::uint8_t* p) {
    float f;
    std::int32_t s;
    std::uint32_t u;
    std::memcpy(type == Type::f32   ? static_cast<void*>(&f)
                : type == Type::i32 ? static_cast<void*>(&s)
                                    : static_cast<void*>(&u),
                p, 4);
    return type == Type::f32 ? f : type == Type::i32 ? s : u;
}

// Compares output `index`; returns "" when every value is within tolerance.
std::string compare(const Kat& kat, std::size_t index, const std::vector<std::uint8_t>& bytes,
                    double& max_error) {
    const Arg& a = kat.args[index];
    for (std::size_t i = 0; i < a.count; ++i) {
        const double got = decode(a.type, bytes.data() + 4 * i);
        double error = std::fabs(got - a.expected[i]);
        error = std::isnan(error) ? std::numeric_limits<double>::infinity() : error;
        max_error = std::max(max_error, error);
        if (!(error <= kat.abs + kat.rel * std::fabs(a.expected[i]))) {
            return "args[" + std::to_string(index) + "][" + std::to_string(i) + "]: got " +
                   number_text(got) + ", expected " + number_text(a.expected[i]);
        }
    }
    return {};
}

// Sets the arguments, launches, reads and compares; "" or why it failed.
std::string launch(cl_context context, cl_device_id device, cl_program program, const Kat& kat,
                   std::string& summary) {
    cl_int err = CL_SUCCESS;
    KernelHandle kernel(clCreateKernel(program, kat.kernel.c_str(), &err));
    if (err != CL_SUCCESS) {
        return failure("clCreateKernel(" + kat.kernel + ")", err);
    }
    QueueHandle queue(clCreateCommandQueueWithProperties(context, device, nullptr, &err));
    if (err != CL_SUCCESS) {
        return failure("clCreateCommandQueueWithProperties", err);
    }
    std::vector<MemHandle> buffers(kat.args.size());
    for (cl_uint i = 0; i < kat.args.size() && err == CL_SUCCESS; ++i) {
        const Arg& a = kat.args[i];
        if (a.kind == Arg::Kind::local) {
            err = clSetKernelArg(kernel.get(), i, a.count, nullptr);
        } else if (a.kind == Arg::Kind::scalar) {
            const auto bytes = encode(a.type, a.in, 1);
            err = clSetKernelArg(kernel.get(), i, 4, bytes.data());
        } else {
            auto bytes = encode(a.type, a.in, a.count);
            buffers[i] = MemHandle(clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                                  bytes.size(), bytes.data(), &err));
            cl_mem mem = buffers[i].get();
            err = err == CL_SUCCESS ? clSetKernelArg(kernel.get(), i, sizeof mem, &mem) : err;
        }
        if (err != CL_SUCCESS) {
            return failure("argument " + std::to_string(i), err);
        }
    }
    err = clEnqueueNDRangeKernel(
        queue.get(), kernel.get(), static_cast<cl_uint>(kat.global.size()), nullptr,
        kat.global.data(), kat.local.empty() ? nullptr : kat.local.data(), 0, nullptr, nullptr);
    if (err != CL_SUCCESS) {
        return failure("clEnqueueNDRangeKernel(" + kat.kernel + ")", err);
    }
    for (std::size_t i = 0; i < kat.args.size(); ++i) {
        if (!kat.args[i].output) {
            continue;
        }
        std::vector<std::uint8_t> bytes(kat.args[i].count * 4);
        err = clEnqueueReadBuffer(queue.get(), buffers[i].get(), CL_TRUE, 0, bytes.size(),
                                  bytes.data(), 0, nullptr, nullptr);
        if (err != CL_SUCCESS) {
            return failure("clEnqueueReadBuffer", err);
        }
        double max_error = 0;
        if (std::string wrong = compare(kat, i, bytes, max_error); !wrong.empty()) {
            return wrong + "; max error " + number_text(max_error);
        }
        summary += (summary.empty() ? "" : "; ") + std::string("args[") + std::to_string(i) +
                   "]: " + std::to_string(kat.args[i].count) + " values, max error " +
                   number_text(max_error);
    }
    return {};
}

}  // namespace

Result<CallerKatVerdict, std::string> run_caller_kat(cl_platform_id platform, cl_device_id device,
                                                     const std::string& kat_text,
                                                     const std::vector<std::uint8_t>& binary,
                                                     const std::string& options) {
    Kat kat;
    try {
        kat = parse(kat_text);
    } catch (const Invalid& e) {
        return fail(e.what);
    }
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                           reinterpret_cast<cl_context_properties>(platform), 0};
    cl_int err = CL_SUCCESS;
    ContextHandle context(clCreateContext(props, 1, &device, nullptr, nullptr, &err));
    if (err != CL_SUCCESS) {
        return CallerKatVerdict{false, failure("clCreateContext", err)};
    }
    auto program = program_from_binary(context.get(), device, binary, options);
    if (!program) {
        return CallerKatVerdict{false,
                                "the driver rejected the binary: " + program.error().message};
    }
    std::string summary;
    const std::string wrong = launch(context.get(), device, program->get(), kat, summary);
    return CallerKatVerdict{wrong.empty(), wrong.empty() ? summary : wrong};
}

}  // namespace kcache::cl
