// The C API's requests: a program for a registry kernel or for the caller's
// source, and a kernel's binary bytes, each from a request struct that can
// grow (struct_size); the entry points of 0.2 are thin wrappers that fill one.

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "c_api_support.hpp"

namespace kcache::c_api {
namespace {

// Parses "p=v,p=v" into `out`; false on a malformed pair.
bool parse_params(const char* text, std::map<std::string, std::string>& out) {
    if (text == nullptr) {
        return true;
    }
    std::string s(text);
    std::size_t start = 0;
    while (start < s.size()) {
        auto end = s.find(',', start);
        if (end == std::string::npos) {
            end = s.size();
        }
        auto pair = s.substr(start, end - start);
        auto eq = pair.find('=');
        if (eq == std::string::npos || eq == 0) {
            return false;
        }
        out[pair.substr(0, eq)] = pair.substr(eq + 1);
        start = end + 1;
    }
    return true;
}

std::optional<std::chrono::milliseconds> deadline_of(uint32_t ms) {
    if (ms == 0) {
        return std::nullopt;
    }
    return std::chrono::milliseconds(ms);
}

bool valid_mode(const kcache_mode& m) {
    const long long v = value_of(m);
    return v >= KCACHE_MODE_BLOCKING && v <= KCACHE_MODE_BACKGROUND;
}

// Fills the fields of `*info` that fit in its struct_size (NULL: nothing).
void fill_info(kcache_info* info, const Outcome& o) {
    if (info == nullptr) {
        return;
    }
    const std::size_t n = info->struct_size;
    if (n >= KCACHE_END(kcache_info, rung)) {
        info->rung = static_cast<kcache_rung>(static_cast<int>(o.rung));
    }
    if (n >= KCACHE_END(kcache_info, total_us)) {
        info->total_us = static_cast<uint64_t>(o.total.count());
    }
    if (n >= KCACHE_END(kcache_info, compile_us)) {
        info->compile_us = static_cast<uint64_t>(o.compile.count());
    }
}

// The C++ request of a C kernel request; "" or what is wrong.
std::string to_kernel_request(const kcache_kernel_request* in, KernelRequest& out) {
    kcache_kernel_request r;
    if (auto e = read_request(in, KCACHE_END(kcache_kernel_request, kernel), r); !e.empty()) {
        return e;
    }
    if (r.kernel == nullptr) {
        return "request->kernel must not be NULL";
    }
    if (!valid_mode(r.mode)) {
        return "request->mode is not a kcache_mode";
    }
    out.kernel = r.kernel;
    if (!parse_params(r.params, out.params)) {
        return "request->params must look like \"dtype=f16,act=relu\"";
    }
    out.deadline = deadline_of(r.deadline_ms);
    out.mode = static_cast<Mode>(r.mode);
    return {};
}

// The C++ reference that calls the caller's C `reference` with `user`.
KatReference kat_reference_of(kcache_kat_reference reference, void* user) {
    return [reference, user](const std::vector<std::vector<float>>& inputs,
                             std::vector<std::vector<float>>& expected) {
        std::vector<const float*> in(inputs.size());
        std::vector<float*> out(inputs.size());
        std::vector<std::size_t> in_counts(inputs.size()), out_counts(inputs.size());
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            in[i] = inputs[i].empty() ? nullptr : inputs[i].data();
            in_counts[i] = inputs[i].size();
            out[i] = expected[i].empty() ? nullptr : expected[i].data();
            out_counts[i] = expected[i].size();
        }
        return reference(user, inputs.size(), in.data(), in_counts.data(), out.data(),
                         out_counts.data()) == 0;
    };
}

// A source request's link units (none when it has none).
std::string link_units_of(const kcache_source_request& r, std::vector<LinkUnit>& out) {
    if (r.n_link_units > 0 && r.link_sources == nullptr) {
        return "request->link_sources must not be NULL when n_link_units > 0";
    } else if (r.n_link_units > 0 && r.options && std::strstr(r.options, "-create-library")) {
        return "request->options: -create-library links a library, not a program kcache keeps";
    }
    size_t header = 0;  // the next unit's first header
    for (size_t i = 0; i < r.n_link_units; ++i) {
        if (r.link_sources[i] == nullptr || *r.link_sources[i] == '\0') {
            return "request->link_sources[" + std::to_string(i) + "] is NULL or empty";
        }
        const char* options = r.link_options != nullptr ? r.link_options[i] : nullptr;
        out.push_back({r.link_sources[i], options != nullptr ? options : ""});
        const size_t count = r.link_header_counts != nullptr ? r.link_header_counts[i] : 0;
        if (count > 0 && (r.link_header_names == nullptr || r.link_header_sources == nullptr)) {
            return "request->link_header_names and link_header_sources must not be NULL";
        }
        for (size_t end = header + count; header < end; ++header) {
            const char* name = r.link_header_names[header];
            if (name == nullptr || *name == '\0' || r.link_header_sources[header] == nullptr) {
                return "request->link_header_names[" + std::to_string(header) +
                       "] is NULL or "
                       "empty, or its link_header_sources[" +
                       std::to_string(header) + "] NULL";
            }
            out.back().headers.emplace_back(name, r.link_header_sources[header]);
        }
    }
    return {};
}

std::string to_source_request(const kcache_source_request* in, SourceRequest& out) {
    kcache_source_request r;
    if (auto e = read_request(in, KCACHE_END(kcache_source_request, source), r); !e.empty()) {
        return e;
    }
    if (auto e = missing_input(r); !e.empty()) {
        return e;
    }
    if (!valid_mode(r.mode)) {
        return "request->mode is not a kcache_mode";
    }
    out.source = input_of(r);
    out.options = r.options != nullptr ? r.options : "";
    out.name = r.name != nullptr ? r.name : "";
    for (size_t i = 0; i < r.n_entry_points; ++i) {
        if (r.entry_points[i] == nullptr) {
            return "request->entry_points holds a NULL name";
        }
        out.entry_points.emplace_back(r.entry_points[i]);
    }
    out.warmup_local_size = r.warmup_local_size;
    if (r.kat_reference != nullptr && r.kat_path == nullptr) {
        return "request->kat_reference needs request->kat_path (the KAT file it completes)";
    }
    if (r.kat_path != nullptr) {
        if (*r.kat_path == '\0') {
            return "request->kat_path is empty (NULL for no known-answer test)";
        }
        out.kat = r.kat_path;
    }
    if (r.kat_reference != nullptr) {
        out.kat_reference = kat_reference_of(r.kat_reference, r.kat_reference_user);
    }
    out.deadline = deadline_of(r.deadline_ms);
    out.mode = static_cast<Mode>(r.mode);
    return link_units_of(r, out.link);
}

// The request of the 0.2 entry points' parameters.
kcache_kernel_request kernel_request_of(const char* kernel, const char* params,
                                        uint32_t deadline_ms, const kcache_mode& mode) {
    kcache_kernel_request r = KCACHE_KERNEL_REQUEST_INIT;
    r.kernel = kernel;
    r.params = params;
    r.deadline_ms = deadline_ms;
    std::memcpy(&r.mode, &mode, sizeof mode);  // checked as bytes: see value_of
    return r;
}

// An invalid-argument outcome "function: what".
Outcome refused(const char* function, const std::string& what) {
    Outcome o;
    o.status = StatusCode::invalid_argument;
    o.message = std::string(function) + ": " + what;
    return o;
}

// A program for a registry kernel: its outcome, `*out` set on ok.
Outcome kernel_program(const char* fn, kcache_cache* cache, cl_context context, cl_device_id device,
                       const kcache_kernel_request* request, cl_program* out) {
    if (cache == nullptr || out == nullptr) {
        return refused(fn, "cache and out must not be NULL");
    }
    *out = nullptr;
    KernelRequest req;
    if (auto e = to_kernel_request(request, req); !e.empty()) {
        return refused(fn, e);
    }
    auto p = cache->cache->program(context, device, req);
    *out = p.ok() ? p.release() : nullptr;
    return p.outcome();
}

Outcome source_program(const char* fn, kcache_cache* cache, cl_context context, cl_device_id device,
                       const kcache_source_request* request, cl_program* out) {
    if (cache == nullptr || out == nullptr) {
        return refused(fn, "cache and out must not be NULL");
    }
    *out = nullptr;
    SourceRequest req;
    if (auto e = to_source_request(request, req); !e.empty()) {
        return refused(fn, e);
    }
    auto p = cache->cache->program(context, device, req);
    *out = p.ok() ? p.release() : nullptr;
    return p.outcome();
}

// A registry kernel's binary: its outcome, `*out` (malloc: kcache_get_binary's
// callers of 0.2 free() it) and `*size` set on ok.
Outcome kernel_binary(const char* fn, kcache_cache* cache, cl_context context, cl_device_id device,
                      const kcache_kernel_request* request, unsigned char** out, size_t* size) {
    if (size != nullptr) {
        *size = 0;
    }
    if (out != nullptr) {
        *out = nullptr;
    }
    if (cache == nullptr || out == nullptr || size == nullptr) {
        return refused(fn, "cache, out and size must not be NULL");
    }
    KernelRequest req;
    if (auto e = to_kernel_request(request, req); !e.empty()) {
        return refused(fn, e);
    }
    auto b = cache->cache->binary(context, device, req);
    if (b.outcome.status == StatusCode::ok) {
        auto* mem = static_cast<unsigned char*>(std::malloc(b.bytes.empty() ? 1 : b.bytes.size()));
        if (mem == nullptr) {
            b.outcome.status = StatusCode::internal_error;
            b.outcome.message = std::string(fn) + ": out of memory";
            return b.outcome;
        }
        std::memcpy(mem, b.bytes.data(), b.bytes.size());
        *out = mem;
        *size = b.bytes.size();
    }
    return b.outcome;
}

// The answer of a request with a kcache_info: the caller's info checked
// first, then filled from the outcome.
template <class Request>
kcache_status with_info(const char* fn, kcache_info* info, Request request) {
    if (info != nullptr && (info->struct_size == 0 || info->struct_size > kMaxStructSize)) {
        return invalid(std::string(fn) + ": set info->struct_size (KCACHE_INFO_INIT)");
    }
    Outcome o = request();
    fill_info(info, o);
    return report(o.status, o.message);
}

}  // namespace
}  // namespace kcache::c_api

using namespace kcache::c_api;

extern "C" {

kcache_status kcache_get_kernel_program(kcache_cache* cache, cl_context context,
                                        cl_device_id device, const kcache_kernel_request* request,
                                        cl_program* out, kcache_info* info) try {
    constexpr const char* fn = "kcache_get_kernel_program";
    if (out != nullptr) {
        *out = nullptr;
    }
    return with_info(fn, info,
                     [&] { return kernel_program(fn, cache, context, device, request, out); });
} catch (...) {
    return escaped("kcache_get_kernel_program");
}

kcache_status kcache_get_source_program(kcache_cache* cache, cl_context context,
                                        cl_device_id device, const kcache_source_request* request,
                                        cl_program* out, kcache_info* info) try {
    constexpr const char* fn = "kcache_get_source_program";
    if (out != nullptr) {
        *out = nullptr;
    }
    return with_info(fn, info,
                     [&] { return source_program(fn, cache, context, device, request, out); });
} catch (...) {
    return escaped("kcache_get_source_program");
}

kcache_status kcache_get_kernel_binary(kcache_cache* cache, cl_context context, cl_device_id device,
                                       const kcache_kernel_request* request, unsigned char** out,
                                       size_t* size, kcache_info* info) try {
    constexpr const char* fn = "kcache_get_kernel_binary";
    if (size != nullptr) {
        *size = 0;
    }
    if (out != nullptr) {
        *out = nullptr;
    }
    return with_info(fn, info,
                     [&] { return kernel_binary(fn, cache, context, device, request, out, size); });
} catch (...) {
    return escaped("kcache_get_kernel_binary");
}

kcache_status kcache_get_kernel_program_v2(kcache_cache* cache, cl_context context,
                                           cl_device_id device,
                                           const kcache_kernel_request* request, cl_program* out,
                                           kcache_outcome** outcome) try {
    if (outcome != nullptr) {
        *outcome = nullptr;
    }
    return answer(
        kernel_program("kcache_get_kernel_program_v2", cache, context, device, request, out),
        outcome);
} catch (...) {
    return escaped("kcache_get_kernel_program_v2");
}

kcache_status kcache_get_source_program_v2(kcache_cache* cache, cl_context context,
                                           cl_device_id device,
                                           const kcache_source_request* request, cl_program* out,
                                           kcache_outcome** outcome) try {
    if (outcome != nullptr) {
        *outcome = nullptr;
    }
    return answer(
        source_program("kcache_get_source_program_v2", cache, context, device, request, out),
        outcome);
} catch (...) {
    return escaped("kcache_get_source_program_v2");
}

kcache_status kcache_get_kernel_binary_v2(kcache_cache* cache, cl_context context,
                                          cl_device_id device, const kcache_kernel_request* request,
                                          unsigned char** out, size_t* size,
                                          kcache_outcome** outcome) try {
    if (outcome != nullptr) {
        *outcome = nullptr;
    }
    return answer(
        kernel_binary("kcache_get_kernel_binary_v2", cache, context, device, request, out, size),
        outcome);
} catch (...) {
    return escaped("kcache_get_kernel_binary_v2");
}

void kcache_free(void* memory) {
    std::free(memory);
}

// The entry points of 0.2: a request of their parameters. Their messages
// name the new function that refused it.

kcache_status kcache_get_program(kcache_cache* cache, cl_context context, cl_device_id device,
                                 const char* kernel, const char* params, uint32_t deadline_ms,
                                 kcache_mode mode, cl_program* out, kcache_info* info) {
    const auto r = kernel_request_of(kernel, params, deadline_ms, mode);
    return kcache_get_kernel_program(cache, context, device, &r, out, info);
}

kcache_status kcache_get_program_source(kcache_cache* cache, cl_context context,
                                        cl_device_id device, const char* source,
                                        const char* options, const char* const* entry_points,
                                        size_t n_entry_points, uint32_t deadline_ms,
                                        kcache_mode mode, cl_program* out, kcache_info* info) {
    kcache_source_request r = KCACHE_SOURCE_REQUEST_INIT;
    r.source = source;
    r.options = options;
    r.entry_points = entry_points;
    r.n_entry_points = n_entry_points;
    r.deadline_ms = deadline_ms;
    std::memcpy(&r.mode, &mode, sizeof mode);  // checked as bytes: see value_of
    return kcache_get_source_program(cache, context, device, &r, out, info);
}

kcache_status kcache_get_binary(kcache_cache* cache, cl_context context, cl_device_id device,
                                const char* kernel, const char* params, uint32_t deadline_ms,
                                kcache_mode mode, unsigned char** out, size_t* size) {
    const auto r = kernel_request_of(kernel, params, deadline_ms, mode);
    return kcache_get_kernel_binary(cache, context, device, &r, out, size, nullptr);
}

}  // extern "C"
