#pragma once
// Device identities, probed once: root devices once per process (they live
// as long as it, and a probe is ~20 driver queries), sub-devices once per
// Cache.

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "kcache/cache/loader.hpp"

namespace kcache::service {

// A probed identity, shared: a request reads it without copying its strings.
using IdentityRef = std::shared_ptr<const device_db::DeviceIdentity>;

class Identities {
  public:
    // `loader` must outlive this object.
    explicit Identities(Loader& loader) : loader_(loader) {}
    // The identity of `device` (never null); error: why it could not be probed.
    Result<IdentityRef, std::string> of(cl_device_id device);

  private:
    Loader& loader_;
    std::mutex mu_;  // guards sub_devices_
    std::map<cl_device_id, IdentityRef> sub_devices_;
};

}  // namespace kcache::service
