// The Cache facade: opening (configuration, store, packs, device data) and
// turning public requests into ladder plans. Nothing here throws outward.

#include <dlfcn.h>

#include <cstdio>

#include "cache_impl.hpp"
#include "kcache/cache/install_paths.hpp"
#include "kcache/kernels/registry.hpp"

namespace kcache {
namespace {

Outcome failed(StatusCode s, std::string message) {
    Outcome o;
    o.status = s;
    o.message = std::move(message);
    return o;
}

Program failed_program(StatusCode s, std::string message) {
    Program p;
    const_cast<Outcome&>(p.outcome()) = failed(s, std::move(message));
    return p;
}

// Every pack file named by `paths` (files, or directories of *.kcpack).
std::vector<store::Pack> open_packs(const std::vector<std::filesystem::path>& paths) {
    std::vector<std::filesystem::path> files;
    for (const auto& p : paths) {
        std::error_code ec;
        if (std::filesystem::is_directory(p, ec)) {
            for (const auto& e : std::filesystem::directory_iterator(p, ec)) {
                if (e.path().extension() == ".kcpack") {
                    files.push_back(e.path());
                }
            }
        } else if (std::filesystem::exists(p, ec)) {
            files.push_back(p);
        }
    }
    std::sort(files.begin(), files.end());
    files.erase(std::unique(files.begin(), files.end()), files.end());
    std::vector<store::Pack> packs;
    for (const auto& f : files) {
        auto pack = store::Pack::open(f);
        if (pack) {
            packs.push_back(std::move(*pack));
        } else {
            std::fprintf(stderr, "kcache: warning: skipping pack %s: %s\n", f.c_str(),
                         pack.error().message.c_str());
        }
    }
    return packs;
}

}  // namespace

Program::Program(Program&& o) noexcept
    : program_(std::exchange(o.program_, nullptr)), outcome_(std::move(o.outcome_)) {}
Program& Program::operator=(Program&& o) noexcept {
    if (this != &o) {
        if (program_ != nullptr) {
            clReleaseProgram(program_);
        }
        program_ = std::exchange(o.program_, nullptr);
        outcome_ = std::move(o.outcome_);
    }
    return *this;
}
Program::~Program() {
    if (program_ != nullptr) {
        clReleaseProgram(program_);
    }
}
cl_program Program::release() {
    return std::exchange(program_, nullptr);
}

Cache::Impl::Impl(Config c, device_db::DeviceDb d, store::TieredStore t, compiler::JitConfig j)
    : config(std::move(c)),
      db(std::move(d)),
      tiers(std::move(t)),
      jit(std::move(j)),
      programs(config.max_programs),
      resident(config.max_resident_bytes) {}

Cache::Impl::~Impl() {
    join_workers();
}

Cache::Cache(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Cache::~Cache() = default;
const Config& Cache::config() const {
    return impl_->config;
}

std::unique_ptr<Cache> Cache::open(const Config& config, Outcome* outcome) {
    Outcome local;
    Outcome& out = outcome ? *outcome : local;
    try {
        auto db = device_db::DeviceDb::from_environment();
        if (!db) {
            out = failed(StatusCode::config_error, "device database: " + db.error().message);
            return nullptr;
        }
        store::Policy policy;
        policy.max_bytes = config.max_bytes;
        policy.mode = config.read_only ? store::OpenMode::read_only : store::OpenMode::read_write;
        auto user = store::Store::open(config.dir, policy);
        if (!user) {
            out = failed(StatusCode::store_error, user.error().message);
            return nullptr;
        }
        auto pack_paths = config.packs;
        for (auto& d : service::installed_pack_dirs()) {
            pack_paths.push_back(std::move(d));
        }
        store::TieredStore tiers(std::move(*user), open_packs(pack_paths));
        compiler::JitConfig jc;
        jc.helper_path = config.jit_helper;
        auto impl = std::make_unique<Impl>(config, std::move(*db), std::move(tiers), jc);
        Impl* raw = impl.get();
        impl->jit = compiler::JitCompiler(compiler::JitConfig{
            jc.helper_path.empty() ? compiler::default_helper_path() : jc.helper_path,
            {},
            [raw](pid_t pid) { track_helper_start(*raw, pid); }});
        out = failed(StatusCode::ok, "");
        return std::unique_ptr<Cache>(new Cache(std::move(impl)));
    } catch (const std::exception& e) {
        out = failed(StatusCode::internal_error, e.what());
        return nullptr;
    }
}

std::unique_ptr<Cache> Cache::open_default(Outcome* outcome) {
    Config c;
    std::string error;
    if (!load_config(c, error)) {
        if (outcome) {
            *outcome = failed(StatusCode::config_error, error);
        }
        return nullptr;
    }
    return open(c, outcome);
}

std::optional<Program> Cache::Impl::repeat_hit(cl_context context, cl_device_id device,
                                               const std::string& signature) {
    auto hit = programs.find_signature(context, device, signature);
    if (!hit) {
        return std::nullopt;
    }
    Program p;
    p.program_ = hit->first;  // already the caller's own reference
    p.outcome_.status = StatusCode::ok;
    p.outcome_.rung = Rung::in_process;
    p.outcome_.key = hit->second.hex();
    counters.in_process++;
    return p;
}

namespace {

// Checks the handles, identifies the device and applies its quirks; fills
// everything of `plan` but the compile input. Returns ok or why not.
Outcome prepare(Cache::Impl& impl, cl_context context, cl_device_id device,
                std::optional<std::chrono::milliseconds> deadline, Mode mode, Plan& plan,
                device_db::DeviceIdentity& id) {
    if (context == nullptr || device == nullptr) {
        return failed(StatusCode::invalid_argument, "null cl_context or cl_device_id");
    }
    if (impl.config.disabled) {
        return failed(StatusCode::disabled, "kcache is disabled (KCACHE_DISABLE)");
    }
    std::string why;
    if (!service::device_in_context(context, device, why)) {
        return failed(StatusCode::invalid_argument, why);
    }
    auto probed = impl.identity(device);
    if (!probed) {
        return failed(StatusCode::device_error, probed.error());
    }
    id = std::move(*probed);
    auto budget = deadline.value_or(impl.config.jit_timeout);
    if (budget.count() < 0) {
        return failed(StatusCode::invalid_argument, "negative deadline");
    }
    auto quirks = impl.db.quirks_for(id);
    if (quirks.deny) {
        return failed(
            StatusCode::unsupported,
            "device denied by quirk rule " + (quirks.rules.empty() ? "" : quirks.rules[0]->id));
    }
    if (quirks.jit_timeout_ms) {
        budget = std::min(budget, std::chrono::milliseconds(*quirks.jit_timeout_ms));
    }
    plan.deadline = SteadyClock::now() + budget;
    plan.mode = mode;
    plan.use_stored = !quirks.no_cached_binaries;
    plan.verified_only = quirks.verify_before_use;
    plan.aot_target = service::aot_target(impl.db, id);
    return failed(StatusCode::ok, "");
}

void finish(Plan& plan, const device_db::DeviceIdentity& id) {
    plan.fields = service::jit_key_fields(id, plan.input);
    plan.key = store::make_key(plan.fields);
}

template <class F>
Program guarded(SteadyClock::time_point start, F&& body) {
    Program p;
    try {
        p = body();
    } catch (const std::exception& e) {
        p = failed_program(StatusCode::internal_error, e.what());
    }
    const_cast<Outcome&>(p.outcome()).total =
        std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start);
    return p;
}

// The repeat-hit path first (null handles and KCACHE_DISABLE still answer as
// the full path would), then `full`, remembering what it resolved.
template <class Request, class Full>
Program answer(Cache::Impl& impl, cl_context context, cl_device_id device, const Request& request,
               Full&& full) {
    if (context == nullptr || device == nullptr || impl.config.disabled) {
        return full(nullptr);
    }
    std::string signature = service::request_signature(request);
    if (auto hit = impl.repeat_hit(context, device, signature)) {
        return std::move(*hit);
    }
    store::Key key;
    Program p = full(&key);
    if (p.ok()) {
        impl.programs.remember(context, device, std::move(signature), key);
    }
    return p;
}

}  // namespace

Program Cache::program(cl_context context, cl_device_id device, const KernelRequest& request) {
    return guarded(SteadyClock::now(), [&]() -> Program {
        return answer(*impl_, context, device, request, [&](store::Key* resolved_key) -> Program {
            kernels::Params params(request.params.begin(), request.params.end());
            auto variant = kernels::make_variant(request.kernel, params);
            if (!variant) {
                auto code = variant.error().code == kernels::KernelErrc::unknown_kernel
                                ? StatusCode::unknown_kernel
                                : StatusCode::invalid_argument;
                return failed_program(code, variant.error().message);
            }
            Plan plan;
            device_db::DeviceIdentity id;
            auto ok = prepare(*impl_, context, device, request.deadline, request.mode, plan, id);
            if (ok.status != StatusCode::ok) {
                return failed_program(ok.status, ok.message);
            }
            if (auto sup = kernels::check_support(*variant, id.extensions); !sup) {
                return failed_program(StatusCode::unsupported, sup.error().message);
            }
            auto rendered = kernels::render(*variant);
            if (!rendered) {
                return failed_program(StatusCode::invalid_argument, rendered.error().message);
            }
            plan.input = {variant->id(), rendered->source, rendered->options,
                          rendered->entry_points};
            plan.warmup_local_size = rendered->local_size;
            finish(plan, id);
            if (resolved_key != nullptr) {
                *resolved_key = plan.key;
            }
            return impl_->run_ladder(context, device, plan);
        });
    });
}

Program Cache::program(cl_context context, cl_device_id device, const SourceRequest& request) {
    return guarded(SteadyClock::now(), [&]() -> Program {
        return answer(*impl_, context, device, request, [&](store::Key* resolved_key) -> Program {
            if (request.source.empty()) {
                return failed_program(StatusCode::invalid_argument, "empty kernel source");
            }
            Plan plan;
            device_db::DeviceIdentity id;
            auto ok = prepare(*impl_, context, device, request.deadline, request.mode, plan, id);
            if (ok.status != StatusCode::ok) {
                return failed_program(ok.status, ok.message);
            }
            plan.input = {request.name, request.source, request.options, request.entry_points};
            plan.warmup_local_size = request.warmup_local_size;
            plan.aot_target.reset();  // AOT packs hold registry kernels only
            finish(plan, id);
            if (resolved_key != nullptr) {
                *resolved_key = plan.key;
            }
            return impl_->run_ladder(context, device, plan);
        });
    });
}

Binary Cache::binary(cl_context context, cl_device_id device, const KernelRequest& request) {
    Binary b;
    Program p = program(context, device, request);
    b.outcome = p.outcome();
    if (!p.ok()) {
        return b;
    }
    std::size_t size = 0;
    cl_int err = clGetProgramInfo(p.get(), CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr);
    if (err != CL_SUCCESS || size == 0) {
        b.outcome.status = StatusCode::device_error;
        b.outcome.message = "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES) failed";
        return b;
    }
    b.bytes.resize(size);
    unsigned char* data = b.bytes.data();
    err = clGetProgramInfo(p.get(), CL_PROGRAM_BINARIES, sizeof(data), &data, nullptr);
    if (err != CL_SUCCESS) {
        b.bytes.clear();
        b.outcome.status = StatusCode::device_error;
        b.outcome.message = "clGetProgramInfo(CL_PROGRAM_BINARIES) failed";
    }
    return b;
}

CacheStats Cache::stats() {
    CacheStats s;
    auto& c = impl_->counters;
    s.in_process_hits = c.in_process;
    s.store_hits = c.store;
    s.pack_hits = c.pack;
    s.aot_hits = c.aot;
    s.failure_hits = c.failure;
    s.jit_compiles = c.jit_compiles;
    s.jit_failures = c.jit_failures;
    s.resident_hits = c.resident;
    s.programs_released = impl_->programs.released();
    if (auto* user = impl_->tiers.user()) {
        if (auto st = user->stats(); st) {
            s.entries = st->entries;
            s.raw_bytes = st->raw_bytes;
            s.stored_bytes = st->stored_bytes;
            s.evictions = st->evictions;
            s.corruptions = st->corruptions;
        }
    }
    return s;
}

std::size_t Cache::forget(cl_context context) noexcept {
    return impl_->programs.forget(context);
}

void Cache::drain(std::chrono::milliseconds limit) {
    auto until = SteadyClock::now() + limit;
    std::vector<std::shared_future<Compiled>> pending;
    {
        std::lock_guard g(impl_->mu);
        for (auto& [key, fut] : impl_->inflight) {
            pending.push_back(fut);
        }
    }
    for (auto& f : pending) {
        f.wait_until(until);
    }
}

namespace service {

std::vector<std::filesystem::path> installed_pack_dirs() {
    std::vector<std::filesystem::path> dirs;
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&installed_pack_dirs), &info) != 0 && info.dli_fname) {
        std::error_code ec;
        auto lib = std::filesystem::canonical(info.dli_fname, ec);
        if (!ec) {
            dirs.push_back((lib.parent_path() / KCACHE_PACK_RELATIVE_DIR).lexically_normal());
        }
    }
    std::filesystem::path configured(KCACHE_PACK_DIR);
    if (dirs.empty() || dirs.front() != configured) {
        dirs.push_back(std::move(configured));
    }
    return dirs;
}

}  // namespace service
}  // namespace kcache
