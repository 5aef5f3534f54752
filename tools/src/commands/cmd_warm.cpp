// kcache warm: builds every kernel variant missing for the devices present
// (or a selection, or a manifest's kernels) through the cache service, so
// that keys, the ladder and the JIT watchdog are exactly the runtime's.

#include <algorithm>
#include <atomic>
#include <iostream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "progress.hpp"
#include "remote_cli.hpp"
#include "reports/canary_report.hpp"
#include "warm/selection.hpp"
#include "warm/warm_spirv.hpp"
#include "warm/warmer.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

struct Batch {
    std::vector<WarmItem> items;
    std::vector<ItemReport> reports;
};

void run_batch(Warmer& warmer, const std::vector<OpenedDevice>& devices, Batch& batch,
               std::size_t jobs, std::chrono::milliseconds timeout, Progress& progress) {
    batch.reports.resize(batch.items.size());
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i; (i = next++) < batch.items.size();) {
            const WarmItem& item = batch.items[i];
            const OpenedDevice& dev = devices[item.device];
            const auto start = std::chrono::steady_clock::now();
            batch.reports[i] = warmer.build(dev, item, timeout);
            const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - start);
            const ItemReport& r = batch.reports[i];
            progress.item(std::string(kResultNames[static_cast<int>(r.result)]) + " " +
                          item.label() + " on " + dev.identity.name + " (" +
                          std::to_string(ms.count()) + " ms)" +
                          (r.result >= WarmResult::unsupported ? ": " + r.message : ""));
        }
    };
    run_parallel(std::min(jobs, batch.items.size()), worker);
}

// An item's message split into its first line and the compiler log after it.
std::pair<std::string, std::string> message_and_log(const std::string& message) {
    const std::size_t nl = message.find('\n');
    if (nl == std::string::npos) {
        return {message, ""};
    }
    return {message.substr(0, nl), message.substr(nl + 1)};
}

void print_item_text(const json& item) {
    std::cout << item["result"].get<std::string>() << ": " << item["kernel"].get<std::string>()
              << " on " << item["device"].get<std::string>() << ": "
              << item["message"].get<std::string>() << "\n";
    std::istringstream log(item["log"].get<std::string>());
    for (std::string line; std::getline(log, line);) {
        std::cout << "    " << line << "\n";
    }
}

using Uploads = std::optional<UploadReport>;

// "remote: 3 uploaded, 1 failed", then one line per kind of upload that was
// not sent or failed, with how many and why.
void print_uploads(const UploadReport& u, bool remote_required) {
    std::cout << "remote: " << u.uploaded << " uploaded, " << u.failed << " failed"
              << (u.failed > 0 && !remote_required
                      ? " (not an error without KCACHE_REMOTE_REQUIRED)\n"
                      : "\n");
    for (const remote::UploadNote& n : u.notes) {
        std::cout << "remote: " << n.count << " upload" << (n.count == 1 ? "" : "s") << ": "
                  << n.reason << "\n";
    }
}

using Counts = std::array<int, std::size(kResultNames)>;
using Spirv = std::optional<SpirvWarm>;

void print_json(const Counts& counts, const Uploads& uploads, const Spirv& spirv, json items) {
    json summary;
    for (std::size_t k = 0; k < counts.size(); ++k) {
        summary[kJsonNames[k]] = counts[k];
    }
    if (uploads) {
        summary["remote_uploads"] = uploads->uploaded;
        summary["remote_upload_failures"] = uploads->failed;
        summary["remote_upload_notes"] = json::array();
        for (const remote::UploadNote& n : uploads->notes) {
            summary["remote_upload_notes"].push_back({{"count", n.count}, {"reason", n.reason}});
        }
    }
    if (spirv) {
        summary["spirv"] = spirv_json(*spirv);
    }
    summary["items"] = std::move(items);
    std::cout << summary.dump(2) << "\n";
}

void print_text(const Counts& counts, std::size_t devices, const json& items) {
    for (const json& item : items) {
        if (item["result"] == "failed" || item["result"] == "timed out" ||
            item["result"] == "not stored") {
            print_item_text(item);
        }
    }
    std::cout << "warm: " << counts[0] << " built, " << counts[1] << " already cached, "
              << counts[2] << " unsupported, " << counts[3] << " failed, " << counts[4]
              << " timed out";
    if (const int n = counts[static_cast<int>(WarmResult::not_stored)]; n > 0) {
        std::cout << ", " << n << " not stored";
    }
    std::cout << " (" << devices << " device" << (devices == 1 ? "" : "s") << ")\n";
    if (counts[4] > 0) {
        std::cout << "timed-out kernels fall back at run time; a longer --timeout may help\n";
    }
    if (counts[static_cast<int>(WarmResult::not_stored)] > 0) {
        std::cout << "built kernels that could not be stored are compiled again next time: "
                     "free space or raise KCACHE_MAX_SIZE\n";
    }
}

// A failed upload is reported and counted, and needs action (exit 1) only
// under KCACHE_REMOTE_REQUIRED: otherwise nothing fails because of the remote.
// So does a SPIR-V entry that failed to build (one skipped, e.g. for want of
// the tools, does not: the native binaries are there).
int summarize(const Batch& batch, const std::vector<OpenedDevice>& devices, const Uploads& uploads,
              const Spirv& spirv, bool remote_required, bool as_json) {
    Counts counts{};
    json items = json::array();
    for (std::size_t i = 0; i < batch.items.size(); ++i) {
        const ItemReport& r = batch.reports[i];
        ++counts[static_cast<std::size_t>(r.result)];
        auto [message, log] = message_and_log(r.message);
        items.push_back({{"kernel", batch.items[i].label()},
                         {"device", devices[batch.items[i].device].identity.name},
                         {"result", kResultNames[static_cast<int>(r.result)]},
                         {"rung", r.rung},
                         {"message", message},
                         {"log", trim_log(log)}});
    }
    const bool upload_failed = uploads && uploads->failed > 0 && remote_required;
    const int needs_action = counts[static_cast<int>(WarmResult::failed)] +
                             counts[static_cast<int>(WarmResult::not_stored)] +
                             (upload_failed ? 1 : 0) + (spirv ? spirv->tally.failed : 0);
    if (as_json) {
        print_json(counts, uploads, spirv, std::move(items));
    } else {
        print_text(counts, devices.size(), items);
        if (uploads) {
            print_uploads(*uploads, remote_required);
        }
        if (spirv) {
            print_spirv(*spirv);
        }
    }
    return needs_action > 0 ? static_cast<int>(Exit::action_needed) : 0;
}

// A manifest's items for `devices`: each on the devices it names (all when
// it names none); a registry entry becomes its variant. Prints why not and
// sets `code` for an unknown kernel or a bad parameter.
std::optional<std::vector<WarmItem>> manifest_items(const std::vector<ManifestItem>& loaded,
                                                    const std::vector<OpenedDevice>& devices,
                                                    int& code) {
    std::vector<WarmItem> items;
    std::size_t elsewhere = 0;
    for (const ManifestItem& m : loaded) {
        std::optional<kernels::Variant> variant;
        if (!m.kernel.empty()) {
            auto made =
                kernels::make_variant(m.kernel, kernels::Params(m.params.begin(), m.params.end()));
            if (!made) {
                code = report(Exit::not_found, "warm", m.name + ": " + made.error().message);
                return std::nullopt;
            }
            variant = std::move(*made);
        }
        const std::size_t before = items.size();
        for (std::size_t d = 0; d < devices.size(); ++d) {
            if (m.devices.empty() || std::find(m.devices.begin(), m.devices.end(),
                                               devices[d].identity.name) != m.devices.end()) {
                items.push_back({d, variant, variant ? std::nullopt : std::optional(m)});
            }
        }
        elsewhere += items.size() == before ? 1 : 0;
    }
    if (elsewhere > 0) {
        std::cerr << "warm: " << elsewhere << " manifest item" << (elsewhere == 1 ? "" : "s")
                  << " name only devices not present here; not built\n";
    }
    return items;
}

// The items to build, or prints why not and sets `code`.
std::optional<std::vector<WarmItem>> plan_items(const ParsedArgs& args,
                                                const std::vector<OpenedDevice>& devices,
                                                int& code) {
    std::vector<WarmItem> items;
    if (auto path = args.value("manifest")) {
        auto loaded = load_manifest(*path);
        if (!loaded) {
            code = report(
                loaded.error().code == ManifestErrc::not_found ? Exit::not_found : Exit::usage,
                "warm", loaded.error().message);
            return std::nullopt;
        }
        return manifest_items(*loaded, devices, code);
    }
    auto variants = select_variants(args.list_value("kernels"), args.list_value("dtypes"));
    if (!variants) {
        code = report(Exit::not_found, "warm", variants.error());
        return std::nullopt;
    }
    for (std::size_t d = 0; d < devices.size(); ++d) {
        for (const kernels::Variant& v : *variants) {
            items.push_back({d, v, std::nullopt});
        }
    }
    return items;
}

// The driver canary on each device warm builds for, one line each.
void run_warm_canaries(const Config& config, const std::vector<OpenedDevice>& devices) {
    std::vector<device_db::DeviceIdentity> ids;
    for (const OpenedDevice& d : devices) {
        ids.push_back(d.identity);
    }
    for (const canary::Record& r : run_canaries(config, ids, canary::fresh_seed(), true)) {
        std::cerr << "warm: driver canary on " << r.identity.describe() << ": "
                  << (r.suspect() ? "SUSPECT (see kcache canary --show)" : "no suspect verdict")
                  << " (" << r.wall_ms << " ms)\n";
    }
}

// What a configuration that warm cannot use gets: the exit code after the
// message, or 0 to go on (uploads that cannot be signed are only a warning
// unless the remote is required).
int refuse_config(const Config& config) {
    if (config.disabled) {
        return report(Exit::usage, "warm",
                      "kcache is disabled (KCACHE_DISABLE): the runtime would use nothing warm "
                      "builds; unset KCACHE_DISABLE to warm");
    }
    if (auto off = no_signed_uploads(config)) {
        if (config.remote_required) {  // a CI warmer that would upload nothing
            return report(Exit::usage, "warm", *off);
        }
        std::cerr << "warm: " << *off << "\n";
    }
    return 0;
}

int run_warm(const ParsedArgs& args) {
    auto jobs = args.uint_value("jobs", 1, kMaxJobs);
    auto timeout = args.duration_value("timeout");
    auto conflict = args.exclusive({"manifest", "kernels"});
    auto conflict2 = args.exclusive({"manifest", "dtypes"});
    for (const auto* problem :
         {jobs.ok() ? nullptr : &jobs.error(), timeout.ok() ? nullptr : &timeout.error(),
          conflict.ok() ? nullptr : &conflict.error(),
          conflict2.ok() ? nullptr : &conflict2.error()}) {
        if (problem) {
            return report(Exit::usage, "warm", problem->message);
        }
    }
    int code = 0;
    auto config = load_cli_config("warm", code);
    if (int refused = config ? refuse_config(*config) : 0) {
        return refused;
    }
    auto db = config ? load_device_db("warm", *config, code) : std::nullopt;
    auto devices = db ? open_devices("warm", args.value("device"), code) : std::nullopt;
    auto items = devices ? plan_items(args, *devices, code) : std::nullopt;
    if (!items) {
        return code;
    }
    // Read-only once the store exists: the precheck only reads, and such a
    // handle writes nothing back at exit (the service has its own for puts).
    // A store file is only ever published with its schema, so "exists" means
    // "readable now", even while another warm is creating it.
    std::error_code ec;
    const bool exists = std::filesystem::exists(config->dir / store::kStoreFileName, ec);
    auto store = open_user_store("warm", code,
                                 exists ? store::OpenMode::read_only : store::OpenMode::read_write);
    if (!store) {
        return code;
    }
    if (config->canary != CanaryPolicy::off) {  // the driver's verdicts before its binaries
        run_warm_canaries(*config, *devices);
    }
    const std::size_t parallel =
        jobs->value_or(std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, kMaxJobs));
    if (config->jit_helpers > 0) {  // one persistent helper per job; 0 keeps one per compile
        config->jit_helpers = parallel;
    }
    Warmer warmer(*config, std::move(*store), std::move(*db));
    Batch batch{std::move(*items), {}};
    const ProgressStyle style = args.has("quiet") ? ProgressStyle::quiet : ProgressStyle::automatic;
    const std::chrono::milliseconds per_compile = timeout->value_or(config->jit_timeout);
    Progress progress(batch.items.size(), style);
    run_batch(warmer, *devices, batch, parallel, per_compile, progress);
    progress.finish();
    // Before the recheck: a SPIR-V entry's put may evict a binary counted above.
    const Spirv spirv = warm_spirv(batch.items, batch.reports, *devices, *config,
                                   spirv_config(*config, args), per_compile, parallel, style);
    warmer.recheck(batch.reports);
    const Uploads uploads = warmer.flush_uploads(std::chrono::seconds(60));
    return summarize(batch, *devices, uploads, spirv, config->remote_required, args.has("json"));
}

}  // namespace

Command warm_command() {
    Command c{
        {"warm",
         "[options]",
         "build the kernel binaries missing for the devices present",
         "Every kernel variant (or the --kernels/--dtypes selection, or a --manifest's\n"
         "kernels) is requested from the cache service for every OpenCL device (or\n"
         "--device), exactly as an application would: hits cost nothing, misses are\n"
         "compiled in the kcache-jit helper under the watchdog and stored in the user\n"
         "store ($KCACHE_DIR, else ~/.cache/kcache). A second run builds nothing.\n"
         "Compiles run in persistent helpers, --jobs of them per device, which start\n"
         "their OpenCL driver once (KCACHE_JIT_HELPERS=0: a fresh helper per compile).\n"
         "Progress: a bar on a terminal, one line per item otherwise (stderr); the\n"
         "summary (built / already cached / unsupported / failed / timed out / not\n"
         "stored) on stdout, with the compiler's log (trimmed) under each failure.\n"
         "\"Already cached\" means the stored entry passed its checksum; a damaged one\n"
         "is rebuilt. A kernel built but not stored (disk full, size bound) is counted\n"
         "as not stored, with the reason, and makes the exit code 1.\n"
         "Unsupported variants (e.g. f16 without cl_khr_fp16) and timeouts are not\n"
         "errors: the runtime falls back for them.\n"
         "--manifest FILE warms an operator library's own kernels and registry variants;\n"
         "the format is in tools/README.md (JSON: kernels with sources, options,\n"
         "entry_points, variants; registry entries; devices). `kcache capture` writes\n"
         "one from the trace of real runs.\n"
         "With a writable remote tier (KCACHE_REMOTE), what is built is uploaded before\n"
         "warm exits (at most 60 s more) and the counts are reported, with one line per\n"
         "reason an upload was not sent or failed (how many, and why); entries that were\n"
         "already cached are not (kcache push uploads those). A failed upload makes the\n"
         "exit code 1 only under KCACHE_REMOTE_REQUIRED. Uploads are signed with\n"
         "KCACHE_REMOTE_SIGNING_KEY; without one, while signed objects are required\n"
         "(KCACHE_REMOTE_REQUIRE_SIGNED), nothing is uploaded: warm says so, and exits 2\n"
         "before building under KCACHE_REMOTE_REQUIRED.\n"
         "For a device whose driver loads IL (cl_khr_il_program), warm also stores the\n"
         "SPIR-V entry of each registry variant it warmed there, as `prebuild --il` makes\n"
         "them (clang-14 and llvm-spirv-14, or --clang and --llvm-spirv), so that a pack\n"
         "exported from the store carries them for the devices that prefer IL; the\n"
         "line `spir-v: N stored, N already stored, N failed` says how many. Without the\n"
         "tools (or with a read-only store) that line says SPIR-V was skipped and why:\n"
         "not an error, the native binaries are stored. A warm without such a device\n"
         "stores no SPIR-V and prints no such line.\n",
         {{"device", Arity::value, "SEL", "only this device: index or name substring"},
          {"kernels", Arity::value, "LIST", "kernel names or aliases (default: all)"},
          {"dtypes", Arity::value, "LIST", "element types, e.g. f32,f16 (default: all)"},
          {"manifest", Arity::value, "FILE", "warm the kernels of this manifest instead"},
          {"jobs", Arity::value, "N", "compiles in parallel, 1 to 256 (default: the CPUs)"},
          {"timeout", Arity::value, "DUR", "per compile (default: KCACHE_JIT_TIMEOUT_MS, 120s)"},
          {"json", Arity::flag, "", "print the summary and every item as JSON"},
          {"quiet", Arity::flag, "", "no progress output"}},
         0,
         0,
         std::string(kExitOk) +
             "  1  some kernel failed to build (build error, crash), or was built but could\n"
             "     not be stored (disk full, KCACHE_MAX_SIZE smaller than the binary), or\n"
             "     an upload failed under KCACHE_REMOTE_REQUIRED (without it, failed uploads\n"
             "     are reported and counted, not errors), or a SPIR-V entry failed to build\n" +
             kExitUsage + "  3  unknown device, kernel or dtype; manifest or source missing\n" +
             "  4  the store cannot be opened\n" + kExitEnvironment},
        run_warm};
    c.spec.options = with_spirv_tool_options(std::move(c.spec.options));
    return c;
}

}  // namespace kcache::cli
