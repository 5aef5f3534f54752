#pragma once
// The runtime's side of the driver canary, shared by the ladder's two gates
// (rungs.hpp: CanaryGate, ErrataGate): before a registry kernel's binary is
// served or compiled on a driver under enforce, that driver's verdicts are
// known (kept for the process, read from <store>/canary/, or got by running
// the canary once: canary_verdicts.hpp) and no erratum covers the variant
// (errata_gate.hpp); a suspect one is not served. Under warn neither can
// change the answer, so both run after it, on a worker of the cache, and a
// suspect finding is logged there once per driver and variant. Only a fresh
// plan is gated: a memoized one passed when it was made.

#include <string>

#include "ask.hpp"
#include "canary_verdicts.hpp"
#include "ladder.hpp"

namespace kcache::service {

// Whether the gates look at `ask` under `config`: a fresh plan of a
// registry variant, with the canary not off.
bool gated(const Config& config, const Ask& ask) noexcept;

// The driver of a gated request's device, made once for both gates.
DriverRef gate_driver(Ask& ask);

// What a suspect finding (`what`: the verdict or erratum, said) makes of a
// gated request under enforce: it is answered driver_suspect with `what` in
// the message, and its plan is dropped (the next request is gated again).
Step suspect_found(Ask& ask, const std::string& what);

// Logs `what` once per store, driver and variant in the process, as served
// anyway under warn.
void warn_once(const Config& config, const std::string& driver_id, const std::string& variant_id,
               const std::string& what);

// The canary's and the errata's suspect finding of `variant` on `driver`,
// said; empty: none (canary_gate.cpp, errata_gate.cpp).
std::string canary_finding(const RungParts& parts, const device_db::DeviceIdentity& device,
                           const DriverRef& driver, const kernels::Variant& variant);
std::string errata_finding(const RungParts& parts, const DriverRef& driver,
                           const kernels::Variant& variant);

// Under warn: both findings of `ask`'s fresh plan, got on a worker of the
// cache (or here when it is closing), each logged with warn_once().
void gate_later(const RungParts& parts, Ask& ask);

}  // namespace kcache::service
