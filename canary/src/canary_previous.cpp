// The differential check's inputs: the binaries earlier driver identities
// (another driver version, or other compiler files) built for the canary's
// variants on the same device, found in the user store.

#include <algorithm>

#include "kcache/canary/canary.hpp"
#include "kcache/device_db/jit_key.hpp"
#include "kcache/store/store.hpp"

namespace kcache::canary {
namespace {

// True when `stored` is a JIT binary of the same variant and source as
// `wanted`, for the same device, built by another driver identity: another
// driver version, or the same version with other compiler files (an update
// of libclc or LLVM alone).
bool earlier_build(const store::KeyFields& stored, const store::KeyFields& wanted) {
    return stored.target_format == "native" && stored.kernel_name == wanted.kernel_name &&
           stored.source_digest == wanted.source_digest && stored.vendor_id == wanted.vendor_id &&
           stored.device_name == wanted.device_name &&
           stored.pci_device_id == wanted.pci_device_id &&
           stored.platform_name == wanted.platform_name &&
           (stored.driver_version != wanted.driver_version ||
            stored.compiler_id != wanted.compiler_id);
}

// The earlier build's name for people: its driver version, and where that is
// the running one's, the part of its compiler identity that names the
// compiler's files (device_db::jit_compiler_id's last field).
std::string earlier_name(const store::KeyFields& stored, const store::KeyFields& wanted) {
    if (stored.driver_version != wanted.driver_version) {
        return stored.driver_version;
    }
    const std::string& id = stored.compiler_id;  // jit:<version>:<uuid>[:<files>]
    if (std::count(id.begin(), id.end(), ':') < 3) {
        return stored.driver_version + ", compiler " + id;
    }
    return stored.driver_version + ", compiler files " + id.substr(id.rfind(':') + 1);
}

// True when the stored verdicts of the driver identity that built `stored`
// on the device of `identity` validated `variant`.
bool validated_by(const std::vector<Record>& records, const DriverIdentity& identity,
                  const store::KeyFields& stored, const kernels::Variant& variant) {
    for (const Record& r : records) {
        if (r.identity.driver != stored.driver_version ||
            r.identity.compiler != stored.compiler_id || r.identity.device != identity.device ||
            r.identity.platform != identity.platform) {
            continue;
        }
        const Verdict* v = verdict_for(r, variant);
        return v != nullptr && v->state == VerdictState::validated;
    }
    return false;
}

}  // namespace

PreviousBinaries previous_binaries(store::Store& store, const device_db::DeviceIdentity& device,
                                   const std::vector<kernels::Variant>& variants,
                                   const std::filesystem::path& dir) {
    PreviousBinaries found;
    auto entries = store.list();
    if (!entries) {
        return found;
    }
    const std::vector<Record> records = load_records(dir);
    const DriverIdentity identity = driver_identity(device);
    for (const kernels::Variant& v : variants) {
        auto rendered = kernels::render(v);
        if (!rendered) {
            continue;
        }
        const store::KeyFields wanted = store::normalized(device_db::jit_key_fields(
            device, {v.id(), rendered->source, rendered->options, rendered->entry_points}));
        const store::EntryInfo* best = nullptr;
        bool best_validated = false;
        for (const store::EntryInfo& e : *entries) {
            if (!earlier_build(e.fields, wanted)) {
                continue;
            }
            const bool validated = validated_by(records, identity, e.fields, v);
            if (best == nullptr || (validated && !best_validated) ||
                (validated == best_validated && e.created_ms > best->created_ms)) {
                best = &e;
                best_validated = validated;
            }
        }
        if (best == nullptr) {
            continue;
        }
        if (auto entry = store.get(best->key)) {
            found[v.id()] = {earlier_name(best->fields, wanted), std::move(entry->bytes)};
        }
    }
    return found;
}

}  // namespace kcache::canary
