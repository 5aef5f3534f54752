#pragma once
// The kernel registry: which kernels exist, under which names, and how a
// variant (element type, fused activation, local size…) becomes the exact
// source text, build options and entry points that reach an OpenCL compiler.
// It knows nothing of devices: device facts come in as plain data.

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kcache/common/result.hpp"

// Installed API: exported from libkcache.so (built with hidden visibility).
#pragma GCC visibility push(default)

namespace kcache::kernels {

enum class KernelErrc {
    unknown_kernel,     // no kernel has that name or alias
    unknown_parameter,  // the kernel has no variant parameter of that name
    invalid_value,      // a value (or combination of values) the kernel does not offer
    malformed_variant,  // a variant id that does not follow "kernel:p=v,p=v"
    unsupported,        // the device lacks an extension that the variant needs
};

struct KernelError {
    KernelErrc code;
    std::string message;
};

// Returns the enumerator's name, e.g. "unknown_kernel".
std::string_view to_string(KernelErrc code);

// One value a variant parameter may take, and what choosing it means.
struct ParamValue {
    std::string value;                    // e.g. "f16"
    std::string options;                  // build options it adds, e.g. "-DKC_F16"
    std::vector<std::string> extensions;  // device extensions it needs
    std::string only_with;                // "param=value" it must be combined with, or ""
};

// A variant parameter; values[0] is its default (for "ls", the preferred local size).
struct Param {
    std::string name;
    std::vector<ParamValue> values;
};

// A kernel as the registry describes it.
struct KernelInfo {
    std::string name;                  // canonical name, the one variants carry
    std::vector<std::string> aliases;  // older or alternative names
    std::string source_file;           // embedded .cl file rendered after the prelude
    std::vector<std::string> entry_points;
    std::vector<Param> params;
};

// A concrete variant: a canonical kernel name and one value for every parameter,
// in the kernel's parameter order (so equal variants compare and print equal).
struct Variant {
    std::string kernel;
    std::vector<std::pair<std::string, std::string>> params;

    // Returns the canonical text form "kernel:p1=v1,p2=v2" that parse_variant reads.
    std::string id() const;
    // Returns the value of parameter `name`, or "" when the kernel has none.
    std::string_view get(std::string_view name) const;
    friend bool operator==(const Variant&, const Variant&) = default;
};

// Parameter choices by name; parameters left out take their default.
using Params = std::map<std::string, std::string, std::less<>>;

// Everything a compiler needs for one variant, and what the cache key hashes.
struct Rendered {
    Variant variant;
    std::string source;   // prelude + kernel text, byte for byte what the compiler gets
    std::string options;  // build options, parameters in declaration order
    std::vector<std::string> entry_points;
    std::vector<std::string> required_extensions;
    std::size_t local_size = 0;  // work-group size the variant is built for; 0 if none
};

// Returns every kernel the library ships, in a fixed order.
const std::vector<KernelInfo>& kernels();

// Returns the kernel named `name_or_alias`; unknown_kernel when there is none.
Result<const KernelInfo*, KernelError> find_kernel(std::string_view name_or_alias);

// Returns the canonical name for `name_or_alias`; unknown_kernel when there is none.
Result<std::string, KernelError> resolve(std::string_view name_or_alias);

// Returns the local sizes `kernel` is offered with, most preferred first (empty if none).
std::vector<std::size_t> preferred_local_sizes(const KernelInfo& kernel);

// Returns the variant of `name_or_alias` with `params` applied over the defaults;
// unknown_kernel, unknown_parameter or invalid_value on a bad name or choice.
Result<Variant, KernelError> make_variant(std::string_view name_or_alias,
                                          const Params& params = {});

// Parses a variant id ("dot:dtype=f16" — missing parameters take defaults, an
// alias is accepted); malformed_variant or the errors of make_variant.
Result<Variant, KernelError> parse_variant(std::string_view id);

// Returns every variant of `kernel` (all valid parameter combinations).
std::vector<Variant> variants(const KernelInfo& kernel);

// Returns every variant of every kernel: what `kcache warm` builds.
std::vector<Variant> all_variants();

// The parameters that choose a precision path (the element type, the output
// type, the arithmetic type), each value a different code path for the
// compiler; the others (activation, local size) change an epilogue or a
// constant.
bool is_precision_param(std::string_view name);

// The values of `variant`'s precision parameters, "dtype=f16,arith=f32":
// variants with the same path share their arithmetic code.
std::string precision_path(const Variant& variant);

// Renders `variant` to source, options and entry points; the errors of
// make_variant when the variant was not made by this registry.
Result<Rendered, KernelError> render(const Variant& variant);

// Ok when a device with `device_extensions` can build `variant`, else
// unsupported naming the missing extension (or the errors of render).
Status<KernelError> check_support(const Variant& variant,
                                  std::span<const std::string> device_extensions);

// Returns the exact text of embedded file `name` (e.g. "prelude.cl"), or
// invalid_value when no such file is embedded.
Result<std::string_view, KernelError> embedded_source(std::string_view name);

}  // namespace kcache::kernels

#pragma GCC visibility pop
