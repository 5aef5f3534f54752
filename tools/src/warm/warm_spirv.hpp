#pragma once
// kcache warm's SPIR-V entries: for the devices present whose driver loads
// IL, the SPIR-V entry of each registry variant warmed there is stored in the
// user store too (prebuild_spirv.hpp, as `prebuild --il` makes them), so that
// a pack exported from the store, or a remote tier it is pushed to, carries
// the module for the devices that prefer IL.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "prebuild_spirv.hpp"
#include "warmer.hpp"

namespace kcache::cli {

struct SpirvWarm {
    std::size_t il_devices = 0;  // the devices warmed that load IL
    std::string skipped;         // why nothing was built (the tools, the store); empty: built
    SpirvTally tally;
};

// The SPIR-V entries of the variants `items` warmed (`reports`: not
// unsupported) on a device of `devices` that loads IL; nullopt when none of
// `devices` loads IL (warm then says nothing of SPIR-V).
std::optional<SpirvWarm> warm_spirv(const std::vector<WarmItem>& items,
                                    const std::vector<ItemReport>& reports,
                                    const std::vector<OpenedDevice>& devices, const Config& config,
                                    const compiler::SpirvConfig& tools,
                                    std::chrono::milliseconds timeout, std::size_t jobs,
                                    ProgressStyle style);

// "spir-v: 6 stored, 0 already stored, 0 failed (…)", or why it was skipped.
void print_spirv(const SpirvWarm& s);

// The same for the JSON summary: stored, already_stored, failed, skipped.
nlohmann::json spirv_json(const SpirvWarm& s);

}  // namespace kcache::cli
