// kcache warm's SPIR-V entries (warm_spirv.hpp).

#include "warm_spirv.hpp"

#include <iostream>
#include <set>

#include "cli.hpp"
#include "kcache/service/keys.hpp"

namespace kcache::cli {
namespace {

// Each variant warmed on a device that loads IL and can run it, once.
std::vector<kernels::Variant> il_variants(const std::vector<WarmItem>& items,
                                          const std::vector<ItemReport>& reports,
                                          const std::vector<OpenedDevice>& devices) {
    std::vector<kernels::Variant> variants;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const WarmItem& item = items[i];
        if (item.variant && reports[i].result != WarmResult::unsupported &&
            service::accepts_il(devices[item.device].identity) &&
            seen.insert(item.variant->id()).second) {
            variants.push_back(*item.variant);
        }
    }
    return variants;
}

}  // namespace

std::optional<SpirvWarm> warm_spirv(const std::vector<WarmItem>& items,
                                    const std::vector<ItemReport>& reports,
                                    const std::vector<OpenedDevice>& devices, const Config& config,
                                    const compiler::SpirvConfig& tools,
                                    std::chrono::milliseconds timeout, std::size_t jobs,
                                    ProgressStyle style) {
    SpirvWarm out;
    for (const OpenedDevice& d : devices) {
        out.il_devices += service::accepts_il(d.identity) ? 1 : 0;
    }
    if (out.il_devices == 0) {
        return std::nullopt;
    }
    const std::vector<kernels::Variant> variants = il_variants(items, reports, devices);
    if (variants.empty()) {
        return out;
    }
    if (config.read_only) {
        out.skipped = "the user store is read-only (KCACHE_READONLY)";
        return out;
    }
    if (auto problem = spirv_tools_problem(tools)) {
        out.skipped = "the SPIR-V tools are unusable: " + *problem +
                      " (install clang-14 and llvm-spirv-14, or name them with --clang and "
                      "--llvm-spirv)";
        return out;
    }
    int code = 0;
    auto store = open_user_store("warm", code, store::OpenMode::read_write);
    if (!store) {
        out.skipped = "the user store cannot be opened for writing";
        return out;
    }
    Progress progress(variants.size(), style);
    out.tally = build_spirv_entries(variants, tools, timeout, jobs, *store, progress);
    progress.finish();
    return out;
}

void print_spirv(const SpirvWarm& s) {
    const std::string devices = std::to_string(s.il_devices) +
                                (s.il_devices == 1 ? " device that loads" : " devices that load");
    if (!s.skipped.empty()) {
        std::cout << "spir-v: skipped for the " << devices << " IL: " << s.skipped
                  << "; the native binaries are stored\n";
        return;
    }
    std::cout << "spir-v: " << s.tally.stored << " stored, " << s.tally.present
              << " already stored, " << s.tally.failed << " failed (for the " << devices
              << " IL)\n";
}

nlohmann::json spirv_json(const SpirvWarm& s) {
    nlohmann::json j{{"stored", s.tally.stored},
                     {"already_stored", s.tally.present},
                     {"failed", s.tally.failed}};
    if (!s.skipped.empty()) {
        j["skipped"] = s.skipped;
    }
    return j;
}

}  // namespace kcache::cli
