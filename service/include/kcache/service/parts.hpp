#pragma once
// The composition root: everything a cache is made of, built from one
// `Config`. `Cache::open` and every CLI command that opens the user store get
// their parts here, so no two front ends map a setting differently (the
// size bound, the hot-copy bound, read-only, the remote settings).

#include <memory>
#include <string>

#include "kcache/common/result.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/remote/remote.hpp"
#include "kcache/service/loader.hpp"
#include "kcache/service/service_api.hpp"
#include "kcache/store/pack.hpp"
#include "kcache/store/store.hpp"

namespace kcache::service {

// What the opener needs of the user store; `Config::read_only` always wins.
enum class StoreAccess { read_write, read_only };
// When SQLite opens: at once, or at the first call that needs it when an
// earlier writable open stamped the file (a hot copy answers meanwhile).
enum class OpenTiming { at_once, deferred };

// The user store's policy under `config`: the one mapping of
// KCACHE_MAX_SIZE, KCACHE_MAX_HOT_BYTES and KCACHE_READONLY.
store::Policy store_policy(const Config& config, StoreAccess access, OpenTiming timing);

// Opens the user store of `config`. A store of an older schema is migrated
// once through a writable handle (unless read-only is configured), then
// opened as asked. Errors are the store's.
Result<store::Store, store::StoreError> open_user_store(const Config& config, StoreAccess access,
                                                        OpenTiming timing);

// A cache's parts. Packs join `tiers` at the first request that gets past
// the user store (their signature checks cost a first hit otherwise).
struct Parts {
    std::unique_ptr<Loader> loader;  // the compute runtime (OpenCL)
    device_db::DeviceDb devices;
    store::TieredStore tiers;
    std::unique_ptr<remote::Client> remote;  // null when no remote is configured
};

// Why the parts could not be made: the status a caller reports, and a message.
struct PartsError {
    StatusCode status = StatusCode::internal_error;
    std::string message;
};

// Builds the parts of a runtime cache under `config`: the OpenCL loader, the device data (with
// its override file), the user store (writable unless configured read-only,
// SQLite deferred), the remote client. Warns through the log sink about
// configured packs that do not exist.
Result<Parts, PartsError> open_parts(const Config& config);

}  // namespace kcache::service
