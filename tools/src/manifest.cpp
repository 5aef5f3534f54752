#include "manifest.hpp"

#include <set>

#include <nlohmann/json.hpp>

#include "kcache/common/read_file.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

// The most a manifest, or one of its kernel sources, may hold.
constexpr std::size_t kMaxManifestBytes = 16u << 20;

// A malformed document: the where and what of the first problem.
struct Invalid {
    std::string message;
};

void check_keys(const json& object, const std::set<std::string>& allowed,
                const std::string& where) {
    if (!object.is_object()) {
        throw Invalid{where + ": expected an object"};
    }
    for (const auto& [key, _] : object.items()) {
        if (!allowed.count(key)) {
            throw Invalid{where + ": unknown key '" + key + "'"};
        }
    }
}

std::string string_at(const json& object, const char* key, const std::string& where,
                      bool required) {
    if (!object.contains(key)) {
        if (required) {
            throw Invalid{where + ": missing '" + key + "'"};
        }
        return {};
    }
    if (!object[key].is_string()) {
        throw Invalid{where + "." + key + ": expected a string"};
    }
    return object[key].get<std::string>();
}

std::vector<std::string> strings_at(const json& object, const char* key, const std::string& where) {
    std::vector<std::string> out;
    if (!object.contains(key)) {
        return out;
    }
    if (!object[key].is_array()) {
        throw Invalid{where + "." + key + ": expected an array of strings"};
    }
    for (const json& item : object[key]) {
        if (!item.is_string()) {
            throw Invalid{where + "." + key + ": expected an array of strings"};
        }
        out.push_back(item.get<std::string>());
    }
    return out;
}

std::string join_options(const std::string& a, const std::string& b) {
    return a.empty() ? b : b.empty() ? a : a + " " + b;
}

// Appends the items of one kernel entry; source files are read from `base`.
Status<ManifestError> add_kernel(const json& k, const std::string& where,
                                 const std::filesystem::path& base,
                                 std::vector<ManifestItem>& out) {
    check_keys(
        k,
        {"name", "sources", "options", "entry_points", "local_size", "kat", "variants", "devices"},
        where);
    ManifestItem item;
    item.name = string_at(k, "name", where, true);
    item.devices = strings_at(k, "devices", where);
    item.options = string_at(k, "options", where, false);
    item.entry_points = strings_at(k, "entry_points", where);
    const auto sources = strings_at(k, "sources", where);
    if (sources.empty()) {
        throw Invalid{where + ": 'sources' must list at least one file"};
    }
    for (const std::string& file : sources) {
        const std::filesystem::path path = base / file;
        auto text = read_regular_file(path, kMaxManifestBytes);
        if (!text) {
            return fail(ManifestError{text.error().code == ReadErrc::not_found
                                          ? ManifestErrc::not_found
                                          : ManifestErrc::invalid,
                                      where + ": cannot read source " + text.error().message});
        }
        item.source += *text;
    }
    if (const std::string kat = string_at(k, "kat", where, false); !kat.empty()) {
        item.kat = base / kat;
        std::error_code ec;
        if (!std::filesystem::is_regular_file(item.kat, ec)) {
            return fail(ManifestError{ManifestErrc::not_found,
                                      where + ".kat: no KAT file " + item.kat.string()});
        }
    }
    if (k.contains("local_size")) {
        if (!k["local_size"].is_number_unsigned()) {
            throw Invalid{where + ".local_size: expected a non-negative integer"};
        }
        item.local_size = k["local_size"].get<std::size_t>();
    }
    if (!k.contains("variants")) {
        out.push_back(item);
        return Ok{};
    }
    if (!k["variants"].is_array() || k["variants"].empty()) {
        throw Invalid{where + ".variants: expected a non-empty array"};
    }
    for (std::size_t i = 0; i < k["variants"].size(); ++i) {
        const json& v = k["variants"][i];
        const std::string vwhere = where + ".variants[" + std::to_string(i) + "]";
        check_keys(v, {"name", "options", "extensions"}, vwhere);
        ManifestItem variant = item;
        variant.name = item.name + ":" + string_at(v, "name", vwhere, true);
        variant.options = join_options(item.options, string_at(v, "options", vwhere, false));
        variant.extensions = strings_at(v, "extensions", vwhere);
        out.push_back(std::move(variant));
    }
    return Ok{};
}

// Appends the item of one registry entry.
void add_registry(const json& r, const std::string& where, std::vector<ManifestItem>& out) {
    check_keys(r, {"kernel", "params", "devices"}, where);
    ManifestItem item;
    item.kernel = string_at(r, "kernel", where, true);
    item.devices = strings_at(r, "devices", where);
    if (r.contains("params")) {
        if (!r["params"].is_object()) {
            throw Invalid{where + ".params: expected an object of strings"};
        }
        for (const auto& [key, value] : r["params"].items()) {
            if (!value.is_string()) {
                throw Invalid{where + ".params." + key + ": expected a string"};
            }
            item.params[key] = value.get<std::string>();
        }
    }
    item.name = item.kernel;
    for (const auto& [key, value] : item.params) {
        item.name += (item.name == item.kernel ? ":" : ",") + key + "=" + value;
    }
    out.push_back(std::move(item));
}

// The array `key` of `doc`, empty when absent.
const json& array_at(const json& doc, const char* key) {
    static const json empty = json::array();
    if (!doc.contains(key)) {
        return empty;
    }
    if (!doc[key].is_array()) {
        throw Invalid{std::string("manifest: '") + key + "' must be an array"};
    }
    return doc[key];
}

}  // namespace

Result<std::vector<ManifestItem>, ManifestError> load_manifest(const std::filesystem::path& path) {
    auto text = read_regular_file(path, kMaxManifestBytes);
    if (!text) {
        return fail(ManifestError{text.error().code == ReadErrc::not_found ? ManifestErrc::not_found
                                                                           : ManifestErrc::invalid,
                                  "cannot read manifest " + text.error().message});
    }
    std::vector<ManifestItem> items;
    try {
        const json doc = json::parse(*text);
        check_keys(doc, {"kernels", "registry"}, "manifest");
        const json& kernels = array_at(doc, "kernels");
        const json& registry = array_at(doc, "registry");
        if (kernels.empty() && registry.empty()) {
            throw Invalid{"manifest: 'kernels' or 'registry' must be a non-empty array"};
        }
        for (std::size_t i = 0; i < registry.size(); ++i) {
            add_registry(registry[i], "registry[" + std::to_string(i) + "]", items);
        }
        for (std::size_t i = 0; i < kernels.size(); ++i) {
            auto added = add_kernel(kernels[i], "kernels[" + std::to_string(i) + "]",
                                    path.parent_path(), items);
            if (!added) {
                ManifestError e = added.error();
                e.message = path.string() + ": " + e.message;
                return fail(e);
            }
        }
    } catch (const json::exception& e) {
        return fail(ManifestError{ManifestErrc::invalid, path.string() + ": " + e.what()});
    } catch (const Invalid& e) {
        return fail(ManifestError{ManifestErrc::invalid, path.string() + ": " + e.message});
    }
    return items;
}

}  // namespace kcache::cli
