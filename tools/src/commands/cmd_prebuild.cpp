// kcache prebuild: ahead-of-time compiles with ocloc for the listed iGPUs
// into a read-only pack, recording the families ocloc cannot target.

#include <sys/stat.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include "cli.hpp"
#include "kcache/compiler/ocloc.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/device_db/loader.hpp"
#include "kcache/service/keys.hpp"
#include "kcache/store/coverage.hpp"
#include "kcache/store/key.hpp"
#include "progress.hpp"
#include "signing.hpp"
#include "warm/prebuild_spirv.hpp"
#include "warm/selection.hpp"

namespace kcache::cli {
namespace {

constexpr const char* kName = "prebuild";
constexpr std::chrono::seconds kDefaultTimeout{120};
constexpr const char* kProducer = "kcache-prebuild 0.1";

// One ocloc target and the device-database families that use it.
struct TargetPlan {
    std::string target;
    std::vector<const device_db::FamilyRecord*> families;
    std::atomic<bool> unsupported{false};
    std::string unsupported_detail;  // set once, by the worker that saw it first
    std::atomic<int> built{0};
    std::atomic<int> failed{0};
};

// The PCI ids of every device record of `family` in the built-in data and
// `override_file` (none when empty).
std::vector<std::uint32_t> family_pci_ids(const std::string& family,
                                          const std::filesystem::path& override_file) {
    std::vector<std::uint32_t> ids;
    auto files = device_db::builtin_data_files();
    if (!files) {
        return ids;
    }
    if (!override_file.empty()) {
        if (auto file = device_db::read_data_file(override_file)) {
            files->push_back(std::move(file).value());
        }
    }
    for (const device_db::DataFile& f : *files) {
        for (const device_db::DeviceRecord& d : f.devices) {
            if (d.family == family && d.name.empty()) {  // named records have no PCI id
                ids.push_back(d.pci_id);
            }
        }
    }
    return ids;
}

// Targets for `names` (family names or ocloc targets), or the default AOT list.
Result<std::vector<std::unique_ptr<TargetPlan>>, std::string> plan_targets(
    const device_db::DeviceDb& db, const std::vector<std::string>& names) {
    std::vector<const device_db::FamilyRecord*> families;
    if (names.empty()) {
        families = db.aot_families();
    }
    for (const std::string& name : names) {
        const device_db::FamilyRecord* found = db.family(name);
        for (const auto& [_, f] : db.families()) {
            found = found ? found : (f.ocloc_target == name ? &f : nullptr);
        }
        if (!found) {
            return fail("unknown target '" + name +
                        "' (not a family or ocloc target in the "
                        "device database)");
        }
        families.push_back(found);
    }
    std::vector<std::unique_ptr<TargetPlan>> plans;
    for (const device_db::FamilyRecord* f : families) {
        auto same = std::find_if(plans.begin(), plans.end(),
                                 [&](const auto& p) { return p->target == f->ocloc_target; });
        if (same == plans.end()) {
            plans.push_back(std::make_unique<TargetPlan>());
            plans.back()->target = f->ocloc_target;
            same = plans.end() - 1;
        }
        (*same)->families.push_back(f);
    }
    return plans;
}

// The key the runtime's AOT rung looks up (kcache/service/keys.hpp): the same
// for every driver of the target.
store::KeyFields aot_fields(const kernels::Rendered& r, const std::string& target) {
    return service::aot_key_fields(target, {r.variant.id(), r.source, r.options, r.entry_points});
}

struct BuildJob {
    std::vector<std::unique_ptr<TargetPlan>>& plans;
    const std::vector<kernels::Variant>& variants;
    const compiler::OclocCompiler& ocloc;
    std::string compiler_id;
    std::chrono::milliseconds timeout;
    store::Store& scratch;
    Progress& progress;
    std::mutex mutex;
};

void build_one(BuildJob& job, TargetPlan& plan, const kernels::Variant& variant) {
    const std::string what = variant.id() + " for " + plan.target;
    if (plan.unsupported) {
        return job.progress.item("skipped " + what + " (target not supported by ocloc)");
    }
    auto rendered = kernels::render(variant);
    auto binary = job.ocloc.compile({rendered->source, rendered->options, plan.target},
                                    deadline_after(job.timeout));
    if (!binary && binary.error().kind == compiler::OclocErrc::unsupported_target) {
        std::lock_guard lock(job.mutex);
        if (!plan.unsupported.exchange(true)) {
            plan.unsupported_detail = binary.error().message;
        }
        return job.progress.item("skipped " + what + " (target not supported by ocloc)");
    }
    if (!binary) {
        ++plan.failed;
        return job.progress.item("FAILED " + what + ": " + binary.error().message);
    }
    const auto& bytes = binary->binary;
    store::Provenance prov{
        kProducer, store::Origin::aot,
        std::chrono::duration_cast<std::chrono::milliseconds>(binary->elapsed).count(),
        binary->log};
    auto put =
        job.scratch.put(aot_fields(*rendered, plan.target),
                        {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, prov);
    if (!put) {
        ++plan.failed;
        return job.progress.item("FAILED " + what + ": " + put.error().message);
    }
    ++plan.built;
    job.progress.item("built " + what);
}

void run_jobs(BuildJob& job, std::size_t jobs) {
    const std::size_t total = job.plans.size() * job.variants.size();
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i; (i = next++) < total;) {
            build_one(job, *job.plans[i / job.variants.size()],
                      job.variants[i % job.variants.size()]);
        }
    };
    run_parallel(std::min(jobs, total), worker);
}

std::vector<store::AotCoverage> coverage_of(const std::vector<std::unique_ptr<TargetPlan>>& plans,
                                            const std::string& compiler_id,
                                            const std::filesystem::path& device_db) {
    std::vector<store::AotCoverage> records;
    for (const auto& plan : plans) {
        for (const device_db::FamilyRecord* f : plan->families) {
            store::AotCoverage r{f->name,
                                 plan->target,
                                 store::CoverageStatus::covered,
                                 family_pci_ids(f->name, device_db),
                                 compiler_id,
                                 ""};
            if (plan->unsupported) {
                r.status = store::CoverageStatus::not_targetable;
                r.detail = plan->unsupported_detail + "; the runtime must JIT";
            } else if (plan->failed > 0) {
                r.status = plan->built > 0 ? store::CoverageStatus::covered
                                           : store::CoverageStatus::failed;
                r.detail = std::to_string(plan->failed.load()) + " variants failed to build";
            }
            records.push_back(std::move(r));
        }
    }
    return records;
}

std::string id_list(const std::vector<std::uint32_t>& ids) {
    std::string out;
    for (std::uint32_t id : ids) {
        out += (out.empty() ? "" : ", ") + device_db::hex_id(id);
    }
    return out.empty() ? "no listed devices" : out;
}

int print_summary(const std::vector<store::AotCoverage>& records, std::uint64_t entries,
                  const std::string& out_path, int failures) {
    std::cout << "pack " << out_path << ": " << entries << " binaries\n";
    for (const store::AotCoverage& r : records) {
        if (r.status == store::CoverageStatus::covered) {
            std::cout << "  covered: " << r.family << " (" << r.ocloc_target << ")\n";
        }
    }
    for (const store::AotCoverage& r : records) {
        if (r.status != store::CoverageStatus::covered) {
            std::cout << "  NOT COVERED: " << r.family << " (" << id_list(r.pci_ids)
                      << "): " << r.detail << "\n";
        }
    }
    return failures > 0 ? static_cast<int>(Exit::action_needed) : 0;
}

// A private scratch directory, removed when done unless kept.
struct ScratchDir {
    std::filesystem::path path;
    bool keep = false;
    ~ScratchDir() {
        std::error_code ec;
        if (!keep) {
            std::filesystem::remove_all(path, ec);
        }
    }
};

// A new directory under `tmpdir` (Config::tmpdir); empty when it cannot be made.
std::filesystem::path make_scratch(const std::filesystem::path& tmpdir) {
    std::string pattern = (tmpdir / "kcache-prebuild-XXXXXX").string();
    return ::mkdtemp(pattern.data()) ? pattern : "";
}

// Writes the pack `out` from the scratch store, with its coverage records;
// returns the summary's exit code, or minus the error's (the builds are then
// kept in the scratch directory, and said so).
int finish_pack(const BuildJob& job, store::Store& built, ScratchDir& scratch,
                const std::filesystem::path& out, const std::filesystem::path& device_db,
                int spirv_failures) {
    auto exported = built.export_pack(out);
    if (!exported) {
        // The builds are done: keep them rather than lose them to a late error.
        scratch.keep = true;
        return -report(exit_for(exported.error()), kName,
                       exported.error().message + "; the built binaries are kept in " +
                           scratch.path.string() + " (KCACHE_DIR=" + scratch.path.string() +
                           " kcache export PACK writes them again)");
    }
    const auto records = coverage_of(job.plans, job.compiler_id, device_db);
    if (auto written = store::write_aot_coverage(out, records); !written) {
        return -report(Exit::store_error, kName, written.error().message);
    }
    ::chmod(out.c_str(), 0444);
    int failures = spirv_failures;
    for (const auto& p : job.plans) {
        failures += p->failed;
    }
    return print_summary(records, *exported, out.string(), failures);
}

// The ocloc targets to build: none with --no-aot.
Result<std::vector<std::unique_ptr<TargetPlan>>, std::string> targets_of(
    const ParsedArgs& args, const device_db::DeviceDb& db) {
    if (args.has("no-aot")) {
        return std::vector<std::unique_ptr<TargetPlan>>{};
    }
    return plan_targets(db, args.list_value("targets"));
}

// A store for the pack's builds in `dir`, keeping every binary built.
std::optional<store::Store> scratch_store(const std::filesystem::path& dir) {
    store::Policy policy;
    policy.max_bytes = 1ull << 40;
    auto store = store::Store::open(dir, policy);
    return store ? std::optional(std::move(*store)) : std::nullopt;
}

// The tools that will build, checked before anything is: ocloc's identity
// (an empty one with --no-aot), or the exit code after saying which is unusable.
Result<compiler::CompilerIdentity, int> check_tools(const ParsedArgs& args,
                                                    const compiler::OclocCompiler& ocloc,
                                                    const compiler::SpirvConfig& spirv) {
    using Identity = Result<compiler::CompilerIdentity, compiler::OclocError>;
    auto identity = args.has("no-aot") ? Identity(compiler::CompilerIdentity{})
                                       : ocloc.identity(deadline_after(std::chrono::seconds(60)));
    if (!identity) {
        return fail(
            report(Exit::environment, kName, "ocloc unusable: " + identity.error().message));
    }
    if (auto problem = args.has("il") ? spirv_tools_problem(spirv) : std::nullopt) {
        return fail(report(Exit::environment, kName, "SPIR-V tools unusable (--il): " + *problem));
    }
    return std::move(*identity);
}

int run_prebuild(const ParsedArgs& args) {
    const std::filesystem::path out = *args.value("output");
    auto jobs = args.uint_value("jobs", 1, kMaxJobs);
    auto timeout = args.duration_value("timeout");
    if (!jobs || !timeout) {
        return report(Exit::usage, kName, (!jobs ? jobs.error() : timeout.error()).message);
    }
    if (auto problem = new_output_problem(out)) {
        return report(problem->code, kName, problem->message);
    }
    if (args.has("no-aot") && !args.has("il")) {
        return report(Exit::usage, kName, "--no-aot builds nothing without --il");
    }
    int db_code = 0;
    std::optional<store::SecretKey> key;  // read first: a bad key fails before the long build
    if (auto key_path = args.value("sign");
        key_path && !(key = load_signing_key(kName, *key_path, db_code))) {
        return db_code;
    }
    auto config = load_cli_config(kName, db_code);
    auto db = config ? load_device_db(kName, *config, db_code) : std::nullopt;
    if (!db) {
        return db_code;
    }
    auto plans = targets_of(args, *db);
    auto variants = select_variants(args.list_value("kernels"), args.list_value("dtypes"));
    if (!plans || !variants) {
        return report(Exit::not_found, kName, !plans ? plans.error() : variants.error());
    }
    compiler::OclocConfig ocloc_settings = ocloc_config(*config);
    ocloc_settings.ocloc_path = args.value("ocloc").value_or(ocloc_settings.ocloc_path);
    const compiler::OclocCompiler ocloc(ocloc_settings);
    const compiler::SpirvConfig spirv = spirv_config(*config, args);
    auto identity = check_tools(args, ocloc, spirv);
    if (!identity) {
        return identity.error();
    }
    ScratchDir scratch{make_scratch(config->tmpdir)};
    auto store = scratch.path.empty() ? std::nullopt : scratch_store(scratch.path);
    if (!store) {
        return report(Exit::store_error, kName, "cannot create a scratch store");
    }
    const std::vector<kernels::Variant> none, &il = args.has("il") ? *variants : none;
    Progress progress(plans->size() * variants->size() + il.size(),
                      args.has("quiet") ? ProgressStyle::quiet : ProgressStyle::automatic);
    BuildJob job{
        *plans, *variants, ocloc, identity->to_string(), timeout->value_or(kDefaultTimeout),
        *store, progress,  {}};
    run_jobs(job, jobs->value_or(1));
    const int spirv_failures =
        build_spirv_entries(il, spirv, job.timeout, jobs->value_or(1), *store, progress).failed;
    progress.finish();
    const int summary = finish_pack(job, *store, scratch, out, config->device_db, spirv_failures);
    if (summary < 0) {
        return -summary;
    }
    const int signed_code = key ? sign_written_pack(kName, out, *key) : 0;
    return signed_code != 0 ? signed_code : summary;
}

}  // namespace

Command prebuild_command() {
    Command c{
        {kName,
         "--output PACK [options]",
         "compile kernels ahead of time with ocloc for Intel GPUs into a read-only pack",
         "Targets default to the device database's AOT list. Several families may share\n"
         "one ocloc target (Raptor Lake uses adl-s); each target is built once. A family\n"
         "the installed ocloc cannot target is named with its PCI ids and recorded in the\n"
         "pack's kcache_aot_coverage table as not_targetable: the runtime JITs there.\n"
         "Such gaps are not failures (exit 0); a kernel that fails to build is (exit 1).\n"
         "--output is checked before anything is built (it must not exist, and its\n"
         "directory must accept it). If the pack still cannot be written at the end,\n"
         "the built binaries are kept in a scratch store whose path is printed.\n"
         "--il adds a SPIR-V entry per variant, compiled for the OpenCL C extensions the\n"
         "variant requires: devices whose driver loads IL and have no binary here build\n"
         "it (the IL rung). --no-aot leaves ocloc out. --clang and --llvm-spirv name\n"
         "the tools (checked before anything is built: exit 5 when one is unusable).\n"
         "The runtime finds packs named *.kcpack in KCACHE_PACKS directories and in\n"
         "<prefix>/share/kcache/packs.\n",
         {{"output", Arity::value, "PACK", "pack file to write (must not exist; *.kcpack)"},
          {"targets", Arity::value, "LIST", "families or ocloc targets (tgllp,mtl-h,…)"},
          {"kernels", Arity::value, "LIST", "kernel names or aliases (default: all)"},
          {"dtypes", Arity::value, "LIST", "element types, e.g. f32,f16 (default: all)"},
          {"jobs", Arity::value, "N", "parallel ocloc runs, 1 to 256 (default 1)"},
          {"timeout", Arity::value, "DUR", "per compile (default 120s)"},
          {"ocloc", Arity::value, "PATH", "ocloc executable (default /usr/bin/ocloc)"},
          {"il", Arity::flag, "", "also store each variant's SPIR-V (clang-14, llvm-spirv-14)"},
          {"no-aot", Arity::flag, "", "no ocloc builds (with --il: a pack of SPIR-V alone)"},
          {"quiet", Arity::flag, "", "no progress output"},
          {"sign", Arity::value, "KEY", "sign the pack (PACK.minisig; see `kcache sign`)"}},
         0,
         0,
         std::string(kExitOk) + "  1  some kernel failed to build for a supported target\n" +
             kExitUsage + kExitNotFound + kExitStore + kExitEnvironment},
        [](const ParsedArgs& a) {
            return a.has("output") ? run_prebuild(a)
                                   : report(Exit::usage, kName, "--output PACK is required");
        }};
    c.spec.options = with_spirv_tool_options(std::move(c.spec.options));
    return c;
}

}  // namespace kcache::cli
