#pragma once
// The runtime's side of the driver canary: before a registry kernel's binary
// is served on a driver, that driver's verdicts are known (kept for the
// process, read from <store>/canary/, or got by running the canary once:
// canary_verdicts.hpp), and the policy decides what a suspect variant gets.

#include <string>

#include "errata_gate.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/service/service_api.hpp"

namespace kcache {
class Workers;
}

namespace kcache::service {

// What the request for `variant` on `device` may do under `config.canary`:
// ok, or (enforce, a suspect verdict, or an erratum of `sources` covering
// the variant on the driver: errata_gate.hpp) driver_suspect with the
// verdict or erratum in the message. Under warn a suspect variant is ok with
// one logged warning per driver and variant in the process, and a canary
// still to run runs on `background` (when not null) while the request goes
// on. Throws only std::bad_alloc.
Outcome canary_gate(const Config& config, const device_db::DeviceIdentity& device,
                    const kernels::Variant& variant, const ErrataSources& sources,
                    Workers* background = nullptr);

}  // namespace kcache::service
