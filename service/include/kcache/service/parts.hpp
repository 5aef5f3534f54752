#pragma once
// The composition root: everything a cache is made of, built from one
// `Config`. `Cache::open` and every CLI command that opens the user store get
// their parts here, so no two front ends map a setting differently (the
// size bound, the hot-copy bound, read-only, the remote settings).

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "kcache/common/result.hpp"
#include "kcache/common/workers.hpp"
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

// The device data requests are planned under: an override file's, built by
// open_parts (its errors are the opener's), or the built-in data, built by
// whoever needs it first: open_parts' head start on a worker, or a request
// that came before the worker got to it (0.1-0.2 ms in a fresh process,
// which a first hit then need not wait for).
class DeviceData {
  public:
    // `ready`: the data with an override file; empty: the built-in data, at
    // first need.
    explicit DeviceData(std::optional<device_db::DeviceDb> ready = std::nullopt);
    DeviceData(const DeviceData&) = delete;
    DeviceData& operator=(const DeviceData&) = delete;

    // The data (it lives as long as this object); error: why the built-in
    // data could not be built (the data kcache shipped with is broken).
    Result<const device_db::DeviceDb*, device_db::DeviceDbError> get();

  private:
    std::once_flag once_;
    std::optional<Result<device_db::DeviceDb, device_db::DeviceDbError>> db_;
};

// A cache's parts. Packs join `tiers` at the first request that gets past
// the user store (their signature checks cost a first hit otherwise).
struct Parts {
    std::unique_ptr<Loader> loader;       // the compute runtime (OpenCL)
    std::unique_ptr<DeviceData> devices;  // never null
    store::TieredStore tiers;
    std::unique_ptr<remote::Client> remote;  // null when no remote is configured
    // The threads of background work, never null: the first one, started
    // before anything else is opened, builds the built-in device data (the
    // head start) and then waits a while for the next work, such as a first
    // hit's gates, which then start no thread.
    std::unique_ptr<Workers> workers;
};

// Why the parts could not be made: the status a caller reports, and a message.
struct PartsError {
    StatusCode status = StatusCode::internal_error;
    std::string message;
};

// Builds the parts of a runtime cache under `config`: the workers and the
// head start, the OpenCL loader, the device data (an override file's at
// once), the user store (writable unless configured read-only, SQLite
// deferred), the remote client. Warns through the log sink about configured
// packs that do not exist.
Result<Parts, PartsError> open_parts(const Config& config);

}  // namespace kcache::service
