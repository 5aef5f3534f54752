// The Cache facade: opening (configuration, store, packs, device data) and
// turning public requests into ladder plans. Nothing here throws outward.

#include "cache_impl.hpp"
#include "kcache/cache/install_paths.hpp"
#include "kcache/cache/pack_trust.hpp"
#include "kcache/cache/parts.hpp"
#include "kcache/cache/remote_tier.hpp"
#include "kcache/common/deadline.hpp"
#include "kcache/common/log.hpp"
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

// Opens every pack file of `files` that the signature policy admits; the
// others go to `refused` with the reason, for the ladder's misses.
std::vector<store::Pack> open_packs(const std::vector<std::filesystem::path>& files,
                                    const Config& config,
                                    std::vector<service::RefusedPack>& refused) {
    const auto policy = service::signature_policy(config);
    std::optional<store::TrustedKeys> keys;
    std::vector<store::Pack> packs;
    for (const auto& f : files) {
        if (!keys) {  // read only when there is a pack to judge
            keys = service::trusted_keys(config);
            for (const std::string& problem : keys->problems()) {
                logging::warning("trusted keys: " + problem);
            }
        }
        // Checked and read over one descriptor: what was checked is what is used.
        auto checked = store::open_checked_pack(f, *keys, policy);
        if (checked.refused) {
            refused.push_back({f, *checked.refused});
            logging::warning(describe(refused.back()));
            continue;
        }
        if (checked.signature.state == store::SignatureState::invalid) {
            logging::warning("pack " + f.string() + " has an invalid signature (" +
                             checked.signature.detail +
                             "); used because signed packs are not required");
        }
        if (checked.pack) {
            packs.push_back(std::move(*checked.pack));
        } else {
            logging::warning("skipping pack " + f.string() + ": " + checked.error);
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
cl_program Program::release() noexcept {
    return std::exchange(program_, nullptr);
}

Cache::Impl::Impl(Config c, std::unique_ptr<service::Loader> l, device_db::DeviceDb d,
                  store::TieredStore t)
    : config(std::move(c)),
      loader(std::move(l)),
      db(std::move(d)),
      tiers(std::move(t)),
      // Helpers are told apart for closing (track_helper_start); the hook
      // runs only once compiles start, when this object is complete.
      jit(compiler::JitConfig{config.jit_helper,
                              {},
                              [this](pid_t pid) { track_helper_start(*this, pid); },
                              config.jit_helpers,
                              config.jit_idle}),
      programs(config.max_programs, *loader),
      resident(config.max_resident_bytes) {}

void Cache::Impl::open_packs_once() {
    std::call_once(packs_opened, [this] {
        tiers.add_packs(open_packs(service::runtime_pack_files(config), config, refused_packs));
    });
}

Cache::Impl::~Impl() {
    join_workers();
}

Cache::Cache(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Cache::~Cache() = default;
const Config& Cache::config() const noexcept {
    return impl_->config;
}

std::unique_ptr<Cache> Cache::open(const Config& config, Outcome* outcome) noexcept {
    Outcome local;
    Outcome& out = outcome ? *outcome : local;
    try {
        auto parts = service::open_parts(config);
        if (!parts) {
            out = failed(parts.error().status, parts.error().message);
            return nullptr;
        }
        auto impl = std::make_unique<Impl>(config, std::move(parts->loader),
                                           std::move(parts->devices), std::move(parts->tiers));
        impl->remote = std::move(parts->remote);
        out = failed(StatusCode::ok, "");
        return std::unique_ptr<Cache>(new Cache(std::move(impl)));
    } catch (const std::exception& e) {
        out = failed(StatusCode::internal_error, e.what());
        return nullptr;
    } catch (...) {
        out = failed(StatusCode::internal_error, "unexpected exception while opening the cache");
        return nullptr;
    }
}

std::unique_ptr<Cache> Cache::open_default(Outcome* outcome) noexcept {
    try {
        Config c;
        std::string error;
        if (!load_config(c, error)) {
            if (outcome) {
                *outcome = failed(StatusCode::config_error, error);
            }
            return nullptr;
        }
        return open(c, outcome);
    } catch (const std::exception& e) {
        if (outcome) {
            *outcome = failed(StatusCode::internal_error, e.what());
        }
    } catch (...) {
        if (outcome) {
            *outcome = failed(StatusCode::internal_error, "unexpected exception");
        }
    }
    return nullptr;
}

std::optional<Program> Cache::Impl::repeat_hit(cl_context context, cl_device_id device,
                                               const std::string& signature, bool& context_known) {
    auto hit = programs.find_signature(context, device, signature);
    context_known = hit.context_known;
    if (hit.program == nullptr) {
        return std::nullopt;
    }
    Program p;
    p.program_ = hit.program;  // already the caller's own reference
    p.outcome_.status = StatusCode::ok;
    p.outcome_.rung = Rung::in_process;
    p.outcome_.key = hit.key.hex();
    counters.in_process++;
    return p;
}

std::unique_ptr<Plan> Cache::Impl::take_plan(cl_device_id device, const std::string& signature) {
    std::lock_guard g(mu);
    auto it = plans.find(PlanView{device, signature});
    // Its place stays, empty while the request runs (another thread asking
    // meanwhile resolves its own).
    return it == plans.end() ? nullptr : std::move(it->second);
}

void Cache::Impl::keep_plan(cl_device_id device, std::string signature, std::unique_ptr<Plan> plan,
                            bool root) {
    // Root devices only: they live as long as the process, so their handle
    // cannot come back naming another device (a released sub-device's can).
    if (config.max_programs == 0 || (!root && !loader->is_root_device(device))) {
        return;
    }
    plan->remote_error.reset();  // this request's, like its deadline and mode
    std::lock_guard g(mu);
    if (auto it = plans.find(PlanView{device, signature}); it != plans.end()) {
        it->second = std::move(plan);  // back in its place
        return;
    }
    if (plans.size() >= config.max_programs) {
        plans.erase(plans.begin());
    }
    plans.emplace(PlanKey{device, std::move(signature)}, std::move(plan));
}

namespace {

// Checks the context, identifies the device and applies its quirks; fills
// everything of `plan` but the compile input and the deadline. Returns ok or
// why not.
Outcome prepare(Cache::Impl& impl, cl_context context, cl_device_id device, Plan& plan,
                device_db::DeviceIdentity& id) {
    std::string why;
    if (!impl.loader->device_in_context(context, device, why)) {
        return failed(StatusCode::invalid_argument, why);
    }
    auto probed = impl.identity(device);
    if (!probed) {
        return failed(StatusCode::device_error, probed.error());
    }
    id = std::move(*probed);
    auto quirks = impl.db.quirks_for(id);
    if (quirks.deny) {
        return failed(
            StatusCode::unsupported,
            "device denied by quirk rule " + (quirks.rules.empty() ? "" : quirks.rules[0]->id));
    }
    if (quirks.jit_timeout_ms) {
        plan.budget_cap = std::chrono::milliseconds(*quirks.jit_timeout_ms);
    }
    plan.use_stored = !quirks.no_cached_binaries;
    plan.verified_only = quirks.verify_before_use;
    plan.aot_target = service::aot_target(impl.db, id);
    plan.platform = impl.loader->platform_of(device);  // null: the in-process rung asks again
    return failed(StatusCode::ok, "");
}

void finish(Plan& plan, const device_db::DeviceIdentity& id) {
    plan.fields = service::jit_key_fields(id, plan.input);
    plan.key = store::make_key(plan.fields);
}

template <class F>
Program guarded(SteadyClock::time_point start, F&& body) noexcept {
    const auto timed = [&](Program p) noexcept {
        const_cast<Outcome&>(p.outcome()).total =
            std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start);
        return p;
    };
    try {
        return timed(body());
    } catch (const std::exception& e) {
        return timed(failed_program(StatusCode::internal_error, e.what()));
    } catch (...) {
        return timed(failed_program(StatusCode::internal_error, "unexpected exception"));
    }
}

// Every request's way: the checks on the handles and the deadline, the
// repeat hit (same context), a plan memoized for this device and request (a
// new context: its handle is still checked), or `resolve(plan)` (prepare,
// render, key; returns ok or why not); then the deadline and the ladder.
template <class Request, class Resolve>
Program answer(Cache::Impl& impl, cl_context context, cl_device_id device, const Request& request,
               Resolve&& resolve) {
    if (context == nullptr || device == nullptr) {
        return failed_program(StatusCode::invalid_argument, "null cl_context or cl_device_id");
    }
    if (impl.config.disabled) {
        return failed_program(StatusCode::disabled, "kcache is disabled (KCACHE_DISABLE)");
    }
    auto budget = request.deadline.value_or(impl.config.jit_timeout);
    if (budget.count() < 0) {
        return failed_program(StatusCode::invalid_argument, "negative deadline");
    }
    std::string signature = service::request_signature(request);
    bool context_known = true;
    if (auto hit = impl.repeat_hit(context, device, signature, context_known)) {
        return std::move(*hit);
    }
    std::unique_ptr<Plan> owned = impl.take_plan(device, signature);
    const bool memoized = owned != nullptr;
    if (memoized) {
        std::string why;
        if (!impl.loader->device_in_context(context, device, why)) {
            impl.keep_plan(device, std::move(signature), std::move(owned), true);
            return failed_program(StatusCode::invalid_argument, why);
        }
    } else {
        owned = std::make_unique<Plan>();
        if (Outcome ok = resolve(*owned); ok.status != StatusCode::ok) {
            return failed_program(ok.status, ok.message);
        }
    }
    Plan& plan = *owned;
    plan.budget = plan.budget_cap ? std::min(budget, *plan.budget_cap) : budget;
    plan.deadline = deadline_after(plan.budget);
    plan.mode = request.mode;
    Program p = impl.run_ladder(context, device, plan, signature, context_known);
    impl.keep_plan(device, std::move(signature), std::move(owned), memoized);
    return p;
}

}  // namespace

Program Cache::program(cl_context context, cl_device_id device,
                       const KernelRequest& request) noexcept {
    return guarded(SteadyClock::now(), [&]() -> Program {
        return answer(*impl_, context, device, request, [&](Plan& plan) -> Outcome {
            kernels::Params params(request.params.begin(), request.params.end());
            auto variant = kernels::make_variant(request.kernel, params);
            if (!variant) {
                auto code = variant.error().code == kernels::KernelErrc::unknown_kernel
                                ? StatusCode::unknown_kernel
                                : StatusCode::invalid_argument;
                return failed(code, variant.error().message);
            }
            device_db::DeviceIdentity id;
            auto ok = prepare(*impl_, context, device, plan, id);
            if (ok.status != StatusCode::ok) {
                return ok;
            }
            if (auto sup = kernels::check_support(*variant, id.extensions); !sup) {
                return failed(StatusCode::unsupported, sup.error().message);
            }
            auto rendered = kernels::render(*variant);
            if (!rendered) {
                return failed(StatusCode::invalid_argument, rendered.error().message);
            }
            plan.input = {variant->id(), rendered->source, rendered->options,
                          rendered->entry_points};
            plan.warmup_local_size = rendered->local_size;
            finish(plan, id);
            return ok;
        });
    });
}

Program Cache::program(cl_context context, cl_device_id device,
                       const SourceRequest& request) noexcept {
    return guarded(SteadyClock::now(), [&]() -> Program {
        return answer(*impl_, context, device, request, [&](Plan& plan) -> Outcome {
            if (request.source.empty()) {
                return failed(StatusCode::invalid_argument, "empty kernel source");
            }
            device_db::DeviceIdentity id;
            auto ok = prepare(*impl_, context, device, plan, id);
            if (ok.status != StatusCode::ok) {
                return ok;
            }
            plan.input = {request.name, request.source, request.options, request.entry_points};
            plan.warmup_local_size = request.warmup_local_size;
            plan.aot_target.reset();  // AOT packs hold registry kernels only
            finish(plan, id);
            return ok;
        });
    });
}

}  // namespace kcache
