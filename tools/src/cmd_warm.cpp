// kcache warm: builds every kernel variant missing for the devices present
// (or a selection, or a manifest's kernels) through the cache service, so
// that keys, the ladder and the JIT watchdog are exactly the runtime's.

#include <atomic>
#include <iostream>
#include <mutex>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "kcache/cache/keys.hpp"
#include "kcache/device_db/database.hpp"
#include "manifest.hpp"
#include "opencl_devices.hpp"
#include "progress.hpp"
#include "selection.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

enum class WarmResult { built, cached, unsupported, failed, timed_out };
constexpr const char* kResultNames[] = {"built", "already cached", "unsupported", "failed",
                                        "timed out"};

// One build: a registry variant or a manifest item, on one device.
struct WarmItem {
    std::size_t device = 0;
    std::optional<kernels::Variant> variant;
    std::optional<ManifestItem> manifest;
    std::string label() const { return variant ? variant->id() : manifest->name; }
};

struct ItemReport {
    WarmResult result = WarmResult::failed;
    std::string rung;
    std::string message;
};

WarmResult classify(const Outcome& o) {
    switch (o.status) {
        case StatusCode::ok:
            return o.rung == Rung::jit ? WarmResult::built : WarmResult::cached;
        case StatusCode::unsupported:
            return WarmResult::unsupported;
        case StatusCode::timeout:
            return WarmResult::timed_out;
        default:
            return WarmResult::failed;
    }
}

// Answers each item: an exact-key check of the user store first (with the
// service's own key function, so a hit builds no program), then the cache
// service for misses. The service is opened at the first miss, so a warm
// that finds everything costs little more than starting OpenCL.
class Warmer {
  public:
    Warmer(Config config, store::Store store, device_db::DeviceDb db)
        : config_(std::move(config)), store_(std::move(store)), db_(std::move(db)) {}

    ItemReport build(const OpenedDevice& dev, const WarmItem& item,
                     std::chrono::milliseconds timeout) {
        const std::optional<std::string> unsupported = missing_support(dev, item);
        if (unsupported) {
            return {WarmResult::unsupported, "none", *unsupported};
        }
        const service::CompileInput input = compile_input(item);
        if (stored(dev, input)) {
            return {WarmResult::cached, "user_store", ""};
        }
        Cache* cache = open_cache();
        if (!cache) {
            return {WarmResult::failed, "none", open_error_};
        }
        Program program;
        if (item.variant) {
            KernelRequest request;
            request.kernel = item.variant->kernel;
            request.params.insert(item.variant->params.begin(), item.variant->params.end());
            request.deadline = timeout;
            program = cache->program(dev.context.get(), dev.device, request);
        } else {
            const ManifestItem& m = *item.manifest;
            SourceRequest request{m.name,       m.source, m.options,     m.entry_points,
                                  m.local_size, timeout,  Mode::blocking};
            program = cache->program(dev.context.get(), dev.device, request);
        }
        const Outcome& o = program.outcome();
        return {classify(o), to_string(o.rung), o.message.substr(0, o.message.find('\n'))};
    }

  private:
    static std::optional<std::string> missing_support(const OpenedDevice& dev,
                                                      const WarmItem& item) {
        if (item.variant) {
            auto ok = kernels::check_support(*item.variant, dev.identity.extensions);
            return ok ? std::nullopt : std::optional(ok.error().message);
        }
        for (const std::string& ext : item.manifest->extensions) {
            if (!dev.identity.has_extension(ext)) {
                return "device lacks " + ext;
            }
        }
        return std::nullopt;
    }

    static service::CompileInput compile_input(const WarmItem& item) {
        if (item.variant) {
            auto r = kernels::render(*item.variant);
            return {item.variant->id(), r->source, r->options, r->entry_points};
        }
        const ManifestItem& m = *item.manifest;
        return {m.name, m.source, m.options, m.entry_points};
    }

    // True when the user store holds the exact key the runtime would look up
    // (and the device's quirks allow stored binaries at all).
    bool stored(const OpenedDevice& dev, const service::CompileInput& input) {
        if (db_.quirks_for(dev.identity).no_cached_binaries) {
            return false;
        }
        const store::Key key = store::make_key(service::jit_key_fields(dev.identity, input));
        std::lock_guard lock(mutex_);
        if (!stored_keys_) {  // one query for the whole batch instead of one per item
            stored_keys_.emplace();
            if (auto listed = store_.list()) {
                for (const store::EntryInfo& e : *listed) {
                    stored_keys_->insert(e.key);
                }
            }
        }
        return stored_keys_->count(key) > 0;
    }

    Cache* open_cache() {
        std::lock_guard lock(mutex_);
        if (!cache_ && open_error_.empty()) {
            Outcome opened;
            cache_ = Cache::open(config_, &opened);
            open_error_ = cache_ ? "" : "cannot open the cache: " + opened.message;
        }
        return cache_.get();
    }

    Config config_;
    store::Store store_;
    device_db::DeviceDb db_;
    std::mutex mutex_;
    std::optional<std::set<store::Key>> stored_keys_;  // the user store's keys at start
    std::unique_ptr<Cache> cache_;
    std::string open_error_;
};

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
    std::vector<std::jthread> threads;
    for (std::size_t t = 0; t < std::min(jobs, batch.items.size()); ++t) {
        threads.emplace_back(worker);
    }
}

int summarize(const Batch& batch, const std::vector<OpenedDevice>& devices, bool as_json) {
    std::array<int, 5> counts{};
    json items = json::array();
    for (std::size_t i = 0; i < batch.items.size(); ++i) {
        const ItemReport& r = batch.reports[i];
        ++counts[static_cast<std::size_t>(r.result)];
        items.push_back({{"kernel", batch.items[i].label()},
                         {"device", devices[batch.items[i].device].identity.name},
                         {"result", kResultNames[static_cast<int>(r.result)]},
                         {"rung", r.rung},
                         {"message", r.message}});
    }
    if (as_json) {
        std::cout << json{{"built", counts[0]},       {"already_cached", counts[1]},
                          {"unsupported", counts[2]}, {"failed", counts[3]},
                          {"timed_out", counts[4]},   {"items", items}}
                         .dump(2)
                  << "\n";
    } else {
        for (const json& item : items) {
            if (item["result"] == "failed" || item["result"] == "timed out") {
                std::cout << item["result"].get<std::string>() << ": "
                          << item["kernel"].get<std::string>() << " on "
                          << item["device"].get<std::string>() << ": "
                          << item["message"].get<std::string>() << "\n";
            }
        }
        std::cout << "warm: " << counts[0] << " built, " << counts[1] << " already cached, "
                  << counts[2] << " unsupported, " << counts[3] << " failed, " << counts[4]
                  << " timed out (" << devices.size() << " device"
                  << (devices.size() == 1 ? "" : "s") << ")\n";
        if (counts[4] > 0) {
            std::cout << "timed-out kernels fall back at run time; a longer --timeout may help\n";
        }
    }
    return counts[3] > 0 ? static_cast<int>(Exit::action_needed) : 0;
}

// The items to build, or prints why not and sets `code`.
std::optional<std::vector<WarmItem>> plan_items(const ParsedArgs& args, std::size_t devices,
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
        for (std::size_t d = 0; d < devices; ++d) {
            for (const ManifestItem& m : *loaded) {
                items.push_back({d, std::nullopt, m});
            }
        }
        return items;
    }
    auto variants = select_variants(args.list_value("kernels"), args.list_value("dtypes"));
    if (!variants) {
        code = report(Exit::not_found, "warm", variants.error());
        return std::nullopt;
    }
    for (std::size_t d = 0; d < devices; ++d) {
        for (const kernels::Variant& v : *variants) {
            items.push_back({d, v, std::nullopt});
        }
    }
    return items;
}

int run(const ParsedArgs& args) {
    auto jobs = args.uint_value("jobs", 1);
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
    auto devices = config ? open_devices("warm", args.value("device"), code) : std::nullopt;
    auto items = devices ? plan_items(args, devices->size(), code) : std::nullopt;
    if (!items) {
        return code;
    }
    // Read-only once the store exists: the precheck only reads, and such a
    // handle writes nothing back at exit (the service has its own for puts).
    const bool exists = std::filesystem::exists(config->dir / store::kStoreFileName);
    auto store = open_user_store("warm", code,
                                 exists ? store::OpenMode::read_only : store::OpenMode::read_write);
    auto db = device_db::DeviceDb::from_environment();
    if (!store || !db) {
        return store ? report(Exit::store_error, "warm", db.error().message) : code;
    }
    Warmer warmer(*config, std::move(*store), std::move(*db));
    Batch batch{std::move(*items), {}};
    Progress progress(batch.items.size(),
                      args.has("quiet") ? ProgressStyle::quiet : ProgressStyle::automatic);
    const std::size_t default_jobs = std::max(1u, std::thread::hardware_concurrency());
    run_batch(warmer, *devices, batch, jobs->value_or(default_jobs),
              timeout->value_or(config->jit_timeout), progress);
    progress.finish();
    return summarize(batch, *devices, args.has("json"));
}

}  // namespace

Command warm_command() {
    return {
        {"warm",
         "[options]",
         "build the kernel binaries missing for the devices present",
         "Every kernel variant (or the --kernels/--dtypes selection, or a --manifest's\n"
         "kernels) is requested from the cache service for every OpenCL device (or\n"
         "--device), exactly as an application would: hits cost nothing, misses are\n"
         "compiled in the kcache-jit helper under the watchdog and stored in the user\n"
         "store ($KCACHE_DIR, else ~/.cache/kcache). A second run builds nothing.\n"
         "Progress: a bar on a terminal, one line per item otherwise (stderr); the\n"
         "summary (built / already cached / unsupported / failed / timed out) on stdout.\n"
         "Unsupported variants (e.g. f16 without cl_khr_fp16) and timeouts are not\n"
         "errors: the runtime falls back for them.\n"
         "--manifest FILE warms an operator library's own kernels; the format is in\n"
         "tools/README.md (JSON: kernels with sources, options, entry_points, variants).\n",
         {{"device", Arity::value, "SEL", "only this device: index or name substring"},
          {"kernels", Arity::value, "LIST", "kernel names or aliases (default: all)"},
          {"dtypes", Arity::value, "LIST", "element types, e.g. f32,f16 (default: all)"},
          {"manifest", Arity::value, "FILE", "warm the kernels of this manifest instead"},
          {"jobs", Arity::value, "N", "compiles in parallel (default: the number of CPUs)"},
          {"timeout", Arity::value, "DUR", "per compile (default: KCACHE_JIT_TIMEOUT_MS, 120s)"},
          {"json", Arity::flag, "", "print the summary and every item as JSON"},
          {"quiet", Arity::flag, "", "no progress output"}},
         0,
         0,
         std::string(kExitOk) + "  1  some kernel failed to build (build error, crash, store)\n" +
             kExitUsage + "  3  unknown device, kernel or dtype; manifest or source missing\n" +
             "  4  the store cannot be opened\n" + kExitEnvironment},
        run};
}

}  // namespace kcache::cli
