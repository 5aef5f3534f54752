#pragma once
// Signing packs from the CLI (`sign`, and `--sign KEY` of prebuild and
// export), and the pack signature report of `verify --pack`.

#include <filesystem>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kcache/service/service_api.hpp"
#include "kcache/sign/signature.hpp"

namespace kcache::cli {

// Reads the unencrypted secret key at `path` for `command`, or prints why not
// and sets `exit_code` (not_found: no such file; usage: not a usable key).
std::optional<store::SecretKey> load_signing_key(std::string_view command,
                                                 const std::filesystem::path& path, int& exit_code);

// Signs `pack` with `key` (writing PACK.minisig) and prints what was signed;
// returns 0, or prints why not and returns store_error.
int sign_written_pack(std::string_view command, const std::filesystem::path& pack,
                      const store::SecretKey& key);

// The signature of `pack`, checked over its descriptor `fd` (-1 when it did
// not open), judged under `config` (trusted keys and policy): prints it
// (text) or returns it as JSON, and sets `needs_action` when the signature
// is invalid or the policy refuses the pack.
nlohmann::json report_pack_signature(int fd, const std::filesystem::path& pack,
                                     const Config& config, bool as_json, bool& needs_action);

}  // namespace kcache::cli
