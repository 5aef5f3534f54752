// Registry lookups, variant construction and rendering over the built-in table.

#include "kcache/kernels/registry.hpp"

#include <algorithm>

#include "embedded_files.hpp"
#include "kernel_table.hpp"

namespace kcache::kernels {
namespace {

KernelError error(KernelErrc code, std::string message) {
    return KernelError{code, std::move(message)};
}

const ParamValue* find_value(const Param& param, std::string_view value) {
    for (const ParamValue& v : param.values) {
        if (v.value == value)
            return &v;
    }
    return nullptr;
}

std::string offered_values(const Param& param) {
    std::string list;
    for (const ParamValue& v : param.values)
        list += (list.empty() ? "" : ", ") + v.value;
    return list;
}

// Checks a value's "only_with" constraint ("param=value") against the chosen values.
bool constraint_holds(const ParamValue& value, const Variant& variant) {
    if (value.only_with.empty())
        return true;
    const auto eq = value.only_with.find('=');
    const std::string_view name = std::string_view(value.only_with).substr(0, eq);
    const std::string_view wanted = std::string_view(value.only_with).substr(eq + 1);
    return variant.get(name) == wanted;
}

// Checks `variant` against `kernel`: every parameter present, in order, with an
// offered value, and every constraint met.
Status<KernelError> validate(const KernelInfo& kernel, const Variant& variant) {
    if (variant.params.size() != kernel.params.size()) {
        return fail(
            error(KernelErrc::invalid_value,
                  "variant " + variant.id() + " does not set every parameter of " + kernel.name));
    }
    for (std::size_t i = 0; i < kernel.params.size(); ++i) {
        const Param& param = kernel.params[i];
        const auto& [name, value] = variant.params[i];
        if (name != param.name) {
            return fail(error(KernelErrc::unknown_parameter,
                              kernel.name + " has no parameter '" + name + "' at position " +
                                  std::to_string(i) + " (expected '" + param.name + "')"));
        }
        const ParamValue* chosen = find_value(param, value);
        if (chosen == nullptr) {
            return fail(error(KernelErrc::invalid_value,
                              kernel.name + ": " + name + "=" + value +
                                  " is not offered (offered: " + offered_values(param) + ")"));
        }
        if (!constraint_holds(*chosen, variant)) {
            return fail(error(KernelErrc::invalid_value, kernel.name + ": " + name + "=" + value +
                                                             " is only offered with " +
                                                             chosen->only_with));
        }
    }
    return Ok{};
}

}  // namespace

std::string_view to_string(KernelErrc code) {
    switch (code) {
        case KernelErrc::unknown_kernel:
            return "unknown_kernel";
        case KernelErrc::unknown_parameter:
            return "unknown_parameter";
        case KernelErrc::invalid_value:
            return "invalid_value";
        case KernelErrc::malformed_variant:
            return "malformed_variant";
        case KernelErrc::unsupported:
            return "unsupported";
    }
    return "unknown";
}

std::string Variant::id() const {
    std::string text = kernel + ":";
    for (std::size_t i = 0; i < params.size(); ++i) {
        text += (i == 0 ? "" : ",") + params[i].first + "=" + params[i].second;
    }
    return text;
}

std::string_view Variant::get(std::string_view name) const {
    for (const auto& [key, value] : params) {
        if (key == name)
            return value;
    }
    return {};
}

const std::vector<KernelInfo>& kernels() {
    static const std::vector<KernelInfo> table = detail::builtin_kernels();
    return table;
}

Result<const KernelInfo*, KernelError> find_kernel(std::string_view name_or_alias) {
    for (const KernelInfo& k : kernels()) {
        if (k.name == name_or_alias ||
            std::find(k.aliases.begin(), k.aliases.end(), name_or_alias) != k.aliases.end()) {
            return &k;
        }
    }
    return fail(
        error(KernelErrc::unknown_kernel, "no kernel named '" + std::string(name_or_alias) + "'"));
}

Result<std::string, KernelError> resolve(std::string_view name_or_alias) {
    auto kernel = find_kernel(name_or_alias);
    if (!kernel)
        return fail(kernel.error());
    return (*kernel)->name;
}

std::vector<std::size_t> preferred_local_sizes(const KernelInfo& kernel) {
    std::vector<std::size_t> sizes;
    for (const Param& p : kernel.params) {
        if (p.name != "ls")
            continue;
        for (const ParamValue& v : p.values)
            sizes.push_back(std::stoul(v.value));
    }
    return sizes;
}

Result<Variant, KernelError> make_variant(std::string_view name_or_alias, const Params& params) {
    auto found = find_kernel(name_or_alias);
    if (!found)
        return fail(found.error());
    const KernelInfo& kernel = **found;
    for (const auto& param : params) {
        const std::string& name = param.first;  // clang 14 cannot capture a structured binding
        const bool known = std::any_of(kernel.params.begin(), kernel.params.end(),
                                       [&](const Param& p) { return p.name == name; });
        if (!known) {
            return fail(error(KernelErrc::unknown_parameter,
                              kernel.name + " has no parameter '" + name + "'"));
        }
    }
    Variant variant{kernel.name, {}};
    for (const Param& p : kernel.params) {
        const auto chosen = params.find(p.name);
        variant.params.emplace_back(
            p.name, chosen == params.end() ? p.values.front().value : chosen->second);
    }
    auto valid = validate(kernel, variant);
    if (!valid)
        return fail(valid.error());
    return variant;
}

Result<Variant, KernelError> parse_variant(std::string_view id) {
    const auto colon = id.find(':');
    const std::string_view name = id.substr(0, colon);
    Params params;
    std::string_view rest = colon == std::string_view::npos ? "" : id.substr(colon + 1);
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        const auto eq = item.find('=');
        if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size() ||
            !params.emplace(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)))
                 .second) {
            return fail(error(KernelErrc::malformed_variant,
                              "variant '" + std::string(id) + "': bad item '" + std::string(item) +
                                  "' (expected kernel:param=value,…)"));
        }
        rest = comma == std::string_view::npos ? "" : rest.substr(comma + 1);
    }
    return make_variant(name, params);
}

std::vector<Variant> variants(const KernelInfo& kernel) {
    std::vector<Variant> out;
    std::vector<std::size_t> index(kernel.params.size(), 0);
    while (true) {
        Variant v{kernel.name, {}};
        for (std::size_t i = 0; i < kernel.params.size(); ++i) {
            v.params.emplace_back(kernel.params[i].name, kernel.params[i].values[index[i]].value);
        }
        if (validate(kernel, v))
            out.push_back(std::move(v));
        // Odometer step: the last parameter varies fastest.
        std::size_t i = kernel.params.size();
        while (i > 0 && ++index[i - 1] == kernel.params[i - 1].values.size())
            index[--i] = 0;
        if (i == 0)
            break;
    }
    return out;
}

std::vector<Variant> all_variants() {
    std::vector<Variant> out;
    for (const KernelInfo& k : kernels()) {
        for (Variant& v : variants(k))
            out.push_back(std::move(v));
    }
    return out;
}

bool is_precision_param(std::string_view name) {
    return name == "dtype" || name == "out" || name == "arith";
}

std::string precision_path(const Variant& variant) {
    std::string path;
    for (const auto& [key, value] : variant.params) {
        if (is_precision_param(key)) {
            path += (path.empty() ? "" : ",") + key + "=" + value;
        }
    }
    return path;
}

Result<std::string_view, KernelError> embedded_source(std::string_view name) {
    for (std::size_t i = 0; i < kEmbeddedFileCount; ++i) {
        if (kEmbeddedFiles[i].name == name)
            return kEmbeddedFiles[i].text;
    }
    return fail(error(KernelErrc::invalid_value, "no embedded file '" + std::string(name) + "'"));
}

Result<Rendered, KernelError> render(const Variant& variant) {
    auto found = find_kernel(variant.kernel);
    if (!found)
        return fail(found.error());
    const KernelInfo& kernel = **found;
    if (kernel.name != variant.kernel) {
        return fail(error(KernelErrc::unknown_kernel, "variant names alias '" + variant.kernel +
                                                          "'; make it with make_variant"));
    }
    auto valid = validate(kernel, variant);
    if (!valid)
        return fail(valid.error());
    auto prelude = embedded_source(detail::kPreludeFile);
    auto body = embedded_source(kernel.source_file);
    if (!prelude || !body)
        return fail((prelude ? body : prelude).error());

    Rendered r;
    r.variant = variant;
    r.source = std::string(*prelude) + std::string(*body);
    r.options = std::string(detail::kBaseOptions);
    r.entry_points = kernel.entry_points;
    for (std::size_t i = 0; i < kernel.params.size(); ++i) {
        const ParamValue& v = *find_value(kernel.params[i], variant.params[i].second);
        if (!v.options.empty())
            r.options += " " + v.options;
        for (const std::string& ext : v.extensions) {
            if (std::find(r.required_extensions.begin(), r.required_extensions.end(), ext) ==
                r.required_extensions.end()) {
                r.required_extensions.push_back(ext);
            }
        }
        if (kernel.params[i].name == "ls")
            r.local_size = std::stoul(v.value);
    }
    return r;
}

Status<KernelError> check_support(const Variant& variant,
                                  std::span<const std::string> device_extensions) {
    auto rendered = render(variant);
    if (!rendered)
        return fail(rendered.error());
    for (const std::string& ext : rendered->required_extensions) {
        if (std::find(device_extensions.begin(), device_extensions.end(), ext) ==
            device_extensions.end()) {
            return fail(error(KernelErrc::unsupported,
                              variant.id() + " needs " + ext + ", which the device lacks"));
        }
    }
    return Ok{};
}

}  // namespace kcache::kernels
