#pragma once
// How the service configures the remote tier from kcache::Config; shared by
// the runtime (Cache::open) and the CLI (push, pull, warm, doctor).

#include <memory>
#include <string>

#include "kcache/common/result.hpp"
#include "kcache/kcache.hpp"
#include "kcache/remote/remote.hpp"

namespace kcache::service {

// The client settings of `config`; the breaker mark and the counters live in
// the user store's directory.
remote::Settings remote_settings(const Config& config);

// The remote client of `config`: nullptr when no remote is configured; a
// message naming the setting when the settings are unusable.
Result<std::unique_ptr<remote::Client>, std::string> open_remote(const Config& config);

}  // namespace kcache::service
