#pragma once
// Device identities, probed once: root devices once per process (they live
// as long as it, and a probe is ~20 driver queries), sub-devices once per
// Cache; and what a request needs of its device besides (DeviceFacts),
// worked out once per root device and Cache.

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kcache/device_db/database.hpp"
#include "kcache/service/keys.hpp"
#include "kcache/service/loader.hpp"
#include "kcache/service/parts.hpp"

namespace kcache::service {

// A probed identity, shared: a request reads it without copying its strings.
using IdentityRef = std::shared_ptr<const device_db::DeviceIdentity>;

// A device as a request's plan needs it: its identity, the quirks that
// apply to it, its AOT target, its platform, and its half of a JIT key
// (jit_device_fields), so that a request of a known device makes none of
// these again.
struct DeviceFacts {
    IdentityRef id;
    device_db::QuirkDecision quirks;
    std::optional<std::string> aot_target;
    cl_platform_id platform = nullptr;  // null: the query failed (asked again where needed)
    store::KeyFields jit_fields;
    bool root = false;  // a root device: these facts are kept, and so can its plans be
};
using FactsRef = std::shared_ptr<const DeviceFacts>;

class Identities {
  public:
    // `loader` must outlive this object.
    explicit Identities(Loader& loader) : loader_(loader) {}
    // The identity of `device` (never null); error: why it could not be probed.
    Result<IdentityRef, std::string> of(cl_device_id device);
    // The facts of `device` under `db` (never null; `db` the same at every
    // call, and outliving this object): made at a root device's first
    // request (its handle never names another device), at every request of
    // a sub-device; the device is probed before the data is asked for, which
    // gives open_parts' head start that long to build it. Error: why its
    // identity could not be probed, or the data built.
    Result<FactsRef, std::string> facts_of(cl_device_id device, DeviceData& db);

  private:
    Result<IdentityRef, std::string> of(cl_device_id device, bool root);
    // The kept facts of root device `device`, or null.
    FactsRef kept(cl_device_id device);

    Loader& loader_;
    std::mutex making_mu_;  // held while facts are made (facts_of)
    std::mutex mu_;         // guards the maps below
    std::map<cl_device_id, IdentityRef> sub_devices_;
    std::map<cl_device_id, FactsRef> root_facts_;
};

}  // namespace kcache::service
