// A manifest's items matched to stored entries (manifest_entries.hpp): by
// the key fields an item fixes whatever the device (source digest, build
// options, entry points, normalized as keys are), then by device name.

#include "manifest_entries.hpp"

#include <algorithm>

#include "kcache/common/sha256.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/store/key.hpp"

namespace kcache::cli {
namespace {

// The device-independent key fields of `item`, or nullopt with why not.
std::optional<store::KeyFields> item_fields(const ManifestItem& item, std::string& why) {
    store::KeyFields f;
    if (item.kernel.empty()) {
        f.source_digest = sha256_hex(item.source);
        f.build_options = item.options;
        f.entry_points = item.entry_points;
        return store::normalized(f);
    }
    auto variant =
        kernels::make_variant(item.kernel, kernels::Params(item.params.begin(), item.params.end()));
    if (!variant) {
        why = item.name + ": " + variant.error().message;
        return std::nullopt;
    }
    auto rendered = kernels::render(*variant);
    if (!rendered) {
        why = item.name + ": " + rendered.error().message;
        return std::nullopt;
    }
    f.source_digest = sha256_hex(rendered->source);
    f.build_options = rendered->options;
    f.entry_points = rendered->entry_points;
    return store::normalized(f);
}

}  // namespace

std::vector<store::Key> manifest_entry_keys(const std::vector<ManifestItem>& items,
                                            const std::vector<store::EntryInfo>& entries,
                                            std::vector<std::string>& unmatched,
                                            std::vector<std::string>& unknown) {
    std::vector<store::Key> keys;
    for (const ManifestItem& item : items) {
        std::string why;
        auto f = item_fields(item, why);
        if (!f) {
            unknown.push_back(why);
            continue;
        }
        bool found = false;
        for (const store::EntryInfo& e : entries) {
            const bool same = e.fields.source_digest == f->source_digest &&
                              e.fields.build_options == f->build_options &&
                              e.fields.entry_points == f->entry_points;
            const bool device =
                item.devices.empty() || std::find(item.devices.begin(), item.devices.end(),
                                                  e.fields.device_name) != item.devices.end();
            if (same && device && std::find(keys.begin(), keys.end(), e.key) == keys.end()) {
                keys.push_back(e.key);
                found = true;
            }
        }
        if (!found) {
            unmatched.push_back(item.name);
        }
    }
    return keys;
}

}  // namespace kcache::cli
