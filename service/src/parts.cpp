// The composition root (parts.hpp): the one place a Config becomes a store
// policy, a user store, device data and a remote client.

#include "kcache/service/parts.hpp"

#include "kcache/common/log.hpp"
#include "kcache/config/remote_tier.hpp"

namespace kcache::service {

store::Policy store_policy(const Config& config, StoreAccess access, OpenTiming timing) {
    store::Policy policy;
    policy.max_bytes = config.max_bytes;
    policy.max_hot_bytes = config.max_hot_bytes;
    policy.defer_open = timing == OpenTiming::deferred;
    policy.mode = config.read_only || access == StoreAccess::read_only
                      ? store::OpenMode::read_only
                      : store::OpenMode::read_write;
    return policy;
}

Result<store::Store, store::StoreError> open_user_store(const Config& config, StoreAccess access,
                                                        OpenTiming timing) {
    const store::Policy policy = store_policy(config, access, timing);
    auto opened = store::Store::open(config.dir, policy);
    if (!opened && opened.error().code == store::StoreErrc::schema_too_old && !config.read_only) {
        store::Policy writable = policy;
        writable.mode = store::OpenMode::read_write;
        bool migrated = false;
        {  // closed before the reopen: one connection at a time
            migrated = store::Store::open(config.dir, writable).ok();
        }
        if (migrated) {
            opened = store::Store::open(config.dir, policy);
        }
    }
    return opened;
}

DeviceData::DeviceData(std::optional<device_db::DeviceDb> ready) {
    if (ready) {
        std::call_once(once_, [&] { db_.emplace(std::move(*ready)); });
    }
}

Result<const device_db::DeviceDb*, device_db::DeviceDbError> DeviceData::get() {
    std::call_once(once_, [this] { db_.emplace(device_db::DeviceDb::builtin()); });
    if (!db_->ok()) {
        return fail(db_->error());
    }
    return &db_->value();
}

namespace {

// The device data of `config`: an override file is parsed here, where its
// errors belong; the built-in data (C++ generated at build time, nothing
// parsed) is the head start's, on a worker, off the opener's path.
Result<std::unique_ptr<DeviceData>, PartsError> device_data(const Config& config,
                                                            Workers& workers) {
    if (!config.device_db.empty()) {
        auto db = device_db::DeviceDb::with_override(config.device_db);
        if (!db) {
            return fail(
                PartsError{StatusCode::config_error, "device database: " + db.error().message});
        }
        return std::make_unique<DeviceData>(std::move(*db));
    }
    auto data = std::make_unique<DeviceData>();
    std::function<void()> head_start = [d = data.get()] { (void)d->get(); };
    (void)workers.start(head_start);  // no thread: the first request builds it
    return data;
}

}  // namespace

Result<Parts, PartsError> open_parts(const Config& config) {
    std::unique_ptr<DeviceData> devices;  // first: it outlives the workers that build it
    auto workers = std::make_unique<Workers>();
    if (auto data = device_data(config, *workers)) {
        devices = std::move(*data);
    } else {
        return fail(data.error());
    }
    // A store file an earlier open stamped opens SQLite at first need: a
    // first hit from a hot copy never does (docs/design.md, "Hot copies").
    auto user = open_user_store(config, StoreAccess::read_write, OpenTiming::deferred);
    if (!user) {
        return fail(PartsError{StatusCode::store_error, user.error().message});
    }
    for (const auto& p : config.packs) {
        if (std::error_code ec; !std::filesystem::exists(p, ec)) {
            logging::warning("KCACHE_PACKS entry " + p.string() + " does not exist");
        }
    }
    auto remote = open_remote(config);
    if (!remote) {
        return fail(PartsError{StatusCode::config_error, remote.error().message});
    }
    if (*remote) {
        (*remote)->warm_up();  // connects while the application still starts
    }
    return Parts{opencl_loader(), std::move(devices), store::TieredStore(std::move(*user), {}),
                 std::move(*remote), std::move(workers)};
}

}  // namespace kcache::service
