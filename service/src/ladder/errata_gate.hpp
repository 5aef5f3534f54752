#pragma once
// The runtime's side of the errata feed: which erratum, if any, covers a
// registry variant on the running driver, from the node's accepted errata,
// the packs' and the remote's. The ladder's errata gate (rungs.hpp:
// ErrataGate) asks it before anything is served or compiled for the driver,
// and treats an answer as a suspect verdict of the canary (canary_gate.hpp).

#include <optional>

#include "canary_verdicts.hpp"
#include "kcache/canary/errata.hpp"
#include "kcache/service/service_api.hpp"

namespace kcache::remote {
class Client;
}

namespace kcache::service {

class StoredTiers;

// Where a cache's errata come from besides the node's file (each may be null).
struct ErrataSources {
    StoredTiers* stored = nullptr;     // the packs' errata (packs opened at the first need)
    remote::Client* remote = nullptr;  // the remote's, per driver identity
};

// The erratum covering `variant` on `driver` for a cache of `config`: the
// node's file (<store>/errata/, read again when it changes), the packs' and
// the remote's. The remote is asked for the driver's errata at the driver's
// first request in the process and again at the first request after each
// breaker window (KCACHE_REMOTE_BREAKER_MS); what it holds is added to the
// node's file (not with KCACHE_READONLY). nullopt: none covers it. Throws
// only std::bad_alloc.
std::optional<errata::Erratum> erratum_for(const Config& config, const DriverRef& driver,
                                           const kernels::Variant& variant,
                                           const ErrataSources& sources);

// Publishes the errata of `record`'s suspect verdicts to `remote` (nothing
// when it has none, or there is no remote); logs a warning when they could
// not be published. Throws only std::bad_alloc.
void publish_findings(const canary::Record& record, remote::Client* remote);

}  // namespace kcache::service
