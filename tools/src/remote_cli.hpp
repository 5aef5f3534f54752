#pragma once
// The remote tier in the CLI: push and pull, and what stats, doctor, explain
// and warm show of it.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "kcache/remote/namespaces.hpp"
#include "kcache/remote/remote.hpp"

namespace kcache::cli {

Command push_command();
Command pull_command();
// kcache remote gc (cmd_remote_gc.cpp).
Command remote_command();

// The configured remote client, nullptr when none is configured; on bad
// settings prints why (prefixed by `command`), sets `exit_code` (usage) and
// returns nullopt.
std::optional<std::unique_ptr<remote::Client>> open_cli_remote(std::string_view command,
                                                               const Config& config,
                                                               int& exit_code);

// Why a writable remote gets no uploads from this node (`kcache warm`): signed
// objects are required and there is no signing key. nullopt otherwise (no
// remote, a read-only one, a key, or settings the service reports itself).
std::optional<std::string> no_signed_uploads(const Config& config);

// The node's persisted remote counters as JSON (`kcache stats`).
nlohmann::json remote_stats_json(const std::filesystem::path& store_dir);
// The same counters of each namespace (KCACHE_REMOTE_NAMESPACE) by name; {}
// when no namespace was used.
nlohmann::json remote_namespace_stats_json(const std::filesystem::path& store_dir);

// The effective value of remote setting `name` for `kcache doctor`.
std::string remote_effective(const Config& config, const std::string& name);

// One doctor line per check of each configured server: (name, detail, ok).
struct RemoteCheck {
    std::string name;
    std::string detail;
    bool ok = true;
};
std::vector<RemoteCheck> remote_checks(const Config& config);

}  // namespace kcache::cli
