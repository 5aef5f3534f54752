#pragma once
// How the service configures the remote tier from kcache::Config; shared by
// the runtime (Cache::open) and the CLI (push, pull, warm, doctor).

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/config/config.hpp"
#include "kcache/remote/remote.hpp"

namespace kcache::service {

// The client settings of `config`; the breaker mark and the counters live in
// the user store's directory.
remote::Settings remote_settings(const Config& config);

// The public key files of `config`'s trusted builders
// (KCACHE_REMOTE_TRUSTED_BUILDERS, ':'-separated; docs/remote.md, "Trusted
// builders"). The setting has no field of Config: load_config keeps its
// value in Config::origins["remote_trusted_builders"], read here; empty
// when unset.
std::vector<std::filesystem::path> trusted_builder_files(const Config& config);

// The namespaces of `c` (KCACHE_REMOTE_NAMESPACE, checked when it was read),
// each with the keys of its trusted.d/namespaces/<name>/ directories
// (remote_config.cpp; docs/remote.md, "Namespaces"); empty when unset.
std::vector<remote::Namespace> remote_namespaces(const Config& c);

// The remote_s3_* settings (remote_config.cpp): the S3 part of
// remote_settings(); the effective value of setting `name` for `kcache doctor`.
remote::S3Settings remote_s3_settings(const Config& c);
std::string remote_s3_effective(const Config& c, const std::string& name);

// The remote client of `config`: nullptr when no remote is configured;
// Client::open's error (a `config` one when the settings are unusable), its
// message naming the setting after "remote tier: ".
Result<std::unique_ptr<remote::Client>, remote::RemoteError> open_remote(const Config& config);

}  // namespace kcache::service
