#pragma once
// One request after resolution (device identity, quirks, variant rendering,
// key): what the rungs below the in-process one look up, compile and load.

#include <chrono>
#include <optional>
#include <string>

#include "kcache/service/keys.hpp"
#include "kcache/service/service_api.hpp"
#include "kcache/store/key.hpp"

namespace kcache::service {

using SteadyClock = std::chrono::steady_clock;

struct Plan {
    device_db::CompileInput input;
    store::KeyFields fields;
    std::string key_record;  // serialize_key_fields(fields), what `key` hashes
    store::Key key;
    std::optional<std::string> aot_target;
    cl_platform_id platform = nullptr;  // the device's
    bool root_device = false;           // known a root device (PlanMemo::keep need not ask)
    std::size_t warmup_local_size = 0;
    SteadyClock::time_point deadline;
    std::chrono::milliseconds budget{0};                  // what `deadline` was made from
    std::optional<std::chrono::milliseconds> budget_cap;  // quirk jit_timeout_ms
    Mode mode = Mode::blocking;
    bool use_stored = true;      // quirk no_cached_binaries turns this off
    bool verified_only = false;  // quirk verify_before_use: only Passed entries
};

}  // namespace kcache::service
