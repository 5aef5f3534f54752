// DeviceDb::builtin and with_override: the built-in records come from the
// C++ that kcache_device_db_compile wrote from the data files at build time
// (builtin_data_files(), defined there), so building them parses nothing.
// This file lives in kcache_device_db, beside that generated source, and not
// in kcache_device_db_core, which the generator itself links.
#include "kcache/device_db/database.hpp"
#include "kcache/device_db/loader.hpp"

namespace kcache::device_db {

Result<DeviceDb, DeviceDbError> DeviceDb::builtin() {
    auto files = builtin_data_files();
    if (!files) {
        return fail(files.error());
    }
    return from_files(std::move(*files));
}

Result<DeviceDb, DeviceDbError> DeviceDb::with_override(
    const std::filesystem::path& override_file) {
    auto db = builtin();
    if (!db || override_file.empty()) {
        return db;
    }
    auto file = read_data_file(override_file);
    if (!file) {
        return fail(file.error());
    }
    if (auto s = db->add_layer(std::move(*file)); !s) {
        return fail(s.error());
    }
    return db;
}

}  // namespace kcache::device_db
