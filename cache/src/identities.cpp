// Device identities, probed once per root device and process.

#include "identities.hpp"

namespace kcache::service {

Result<IdentityRef, std::string> Identities::of(cl_device_id device) {
    // Shared by every Cache of the process: a root device's identity cannot change.
    static std::mutex roots_mu;
    static std::map<cl_device_id, IdentityRef> roots;
    const bool root = loader_.is_root_device(device);
    std::mutex& mu = root ? roots_mu : mu_;
    auto& known = root ? roots : sub_devices_;
    {
        std::lock_guard g(mu);
        if (auto it = known.find(device); it != known.end()) {
            return it->second;
        }
    }
    auto id = loader_.identify(device);
    if (!id) {
        return fail(id.error());
    }
    auto shared = std::make_shared<const device_db::DeviceIdentity>(std::move(*id));
    std::lock_guard g(mu);
    return known.emplace(device, std::move(shared)).first->second;
}

}  // namespace kcache::service
