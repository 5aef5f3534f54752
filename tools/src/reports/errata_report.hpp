#pragma once
// The errata a node applies, for the commands that show them (errata list,
// explain): cmd_errata.cpp.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kcache/canary/errata.hpp"
#include "kcache/service/service_api.hpp"

namespace kcache::cli {

// Every erratum this node applies: its accepted ones (<store>/errata/), its
// packs' (those the signature policy admits) and its own canary's findings,
// each with its source. A damaged errata file is reported (prefixed by
// `command`) and sets `exit_code` (store_error); a pack whose errata do not
// parse is reported and left out.
std::vector<errata::Erratum> applied_errata(std::string_view command, const Config& config,
                                            int& exit_code);

// One line per errata feed in force on the node (version, age, expiry;
// `stale` once it expired), or one naming a damaged feeds.json (`damaged`).
struct FeedLine {
    std::string text;
    bool stale = false;
    bool damaged = false;
};
std::vector<FeedLine> errata_feed_lines(const std::filesystem::path& store_dir);

// The erratum covering `variant` on `device` among applied_errata(): its
// id, source and description; null when none does (or they cannot be read).
nlohmann::json covering_erratum(const Config& config, const device_db::DeviceIdentity& device,
                                const kernels::Variant& variant);

}  // namespace kcache::cli
