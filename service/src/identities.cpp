// Device identities, probed once per root device and process, and their
// facts, once per root device and Cache.

#include "identities.hpp"

namespace kcache::service {

Result<IdentityRef, std::string> Identities::of(cl_device_id device) {
    return of(device, loader_.is_root_device(device));
}

Result<IdentityRef, std::string> Identities::of(cl_device_id device, bool root) {
    // Shared by every Cache of the process: a root device's identity cannot
    // change. Left to exit (no destructor to register), so that the first
    // request may come from any thread, the layer's own included.
    static auto* roots_mu = new std::mutex;
    static auto* roots = new std::map<cl_device_id, IdentityRef>;
    std::mutex& mu = root ? *roots_mu : mu_;
    auto& known = root ? *roots : sub_devices_;
    {
        std::lock_guard g(mu);
        if (auto it = known.find(device); it != known.end()) {
            return it->second;
        }
    }
    auto id = loader_.identify(device);
    if (!id) {
        return fail(id.error().message);
    }
    auto shared = std::make_shared<const device_db::DeviceIdentity>(std::move(*id));
    std::lock_guard g(mu);
    return known.emplace(device, std::move(shared)).first->second;
}

Result<FactsRef, std::string> Identities::facts_of(cl_device_id device, DeviceData& data) {
    if (FactsRef known = kept(device)) {
        return known;  // no driver query: only root devices are kept
    }
    // One thread makes facts at a time: a request that comes while
    // Cache::prepare learns its device waits for those facts, not makes them again.
    std::lock_guard making(making_mu_);
    if (FactsRef known = kept(device)) {
        return known;
    }
    const bool root = loader_.is_root_device(device);
    auto id = of(device, root);
    if (!id) {
        return fail(id.error());
    }
    auto db = data.get();
    if (!db) {
        return fail("the built-in device data: " + db.error().message);
    }
    auto facts = std::make_shared<DeviceFacts>();
    facts->id = *id;
    facts->quirks = (*db)->quirks_for(**id);
    facts->aot_target = aot_target(**db, **id);
    facts->platform = loader_.platform_of(device);
    facts->jit_fields = device_db::jit_device_fields(**id);
    facts->root = root;
    FactsRef shared = std::move(facts);
    if (root) {
        std::lock_guard g(mu_);
        return root_facts_.emplace(device, std::move(shared)).first->second;
    }
    return shared;
}

FactsRef Identities::kept(cl_device_id device) {
    std::lock_guard g(mu_);
    const auto it = root_facts_.find(device);
    return it != root_facts_.end() ? it->second : nullptr;
}

}  // namespace kcache::service
