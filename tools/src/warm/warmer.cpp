// The warm command's builder (warmer.hpp).

#include "warmer.hpp"

#include "cli.hpp"
#include "kat.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/service/keys.hpp"

namespace kcache::cli {
namespace {

std::optional<std::string> missing_support(const OpenedDevice& dev, const WarmItem& item) {
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

device_db::CompileInput compile_input(const WarmItem& item) {
    if (item.variant) {
        auto r = kernels::render(*item.variant);
        return {item.variant->id(), r->source, r->options, r->entry_points};
    }
    const ManifestItem& m = *item.manifest;
    return {m.name, m.source, m.options, m.entry_points};
}

}  // namespace

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

ItemReport Warmer::build(const OpenedDevice& dev, const WarmItem& item,
                         std::chrono::milliseconds timeout) {
    const std::optional<std::string> unsupported = missing_support(dev, item);
    if (unsupported) {
        return {WarmResult::unsupported, "none", *unsupported, std::nullopt};
    }
    const device_db::CompileInput input = compile_input(item);
    const bool storable = !db_.quirks_for(dev.identity).no_cached_binaries;
    const store::KeyFields fields = device_db::jit_key_fields(dev.identity, input);
    if (storable && stored(fields)) {
        return {WarmResult::cached, "user_store", "", fields};
    }
    Cache* cache = open_cache();
    if (!cache) {
        return {WarmResult::failed, "none", open_error_, std::nullopt};
    }
    const Program program = request(*cache, dev, item, timeout);
    const Outcome& o = program.outcome();
    ItemReport report{classify(o), to_string(o.rung), o.message, std::nullopt};
    const bool from_user_store = report.result == WarmResult::cached && o.rung == Rung::user_store;
    if (storable && (report.result == WarmResult::built || from_user_store)) {
        report.kept = fields;
    }
    if (report.kept && !stored(fields)) {
        // Counted only once the store really holds it, checksum verified
        // (a hot copy answers only for its entry, but one may have gone since).
        report.result = WarmResult::not_stored;
        report.kept.reset();
        if (from_user_store) {
            report.message =
                "answered by a hot copy whose entry the user store no longer "
                "holds: warm again";
        } else if (report.message.empty()) {
            report.message = config_.read_only ? "compiled, but not stored: the store is read-only "
                                                 "(KCACHE_READONLY)"
                                               : "compiled, but the user store does not hold it";
        }
    }
    if (item.manifest && !item.manifest->kat.empty() && report.kept) {
        caller_kat(dev, *item.manifest, *report.kept, timeout, report);
    }
    return report;
}

void Warmer::caller_kat(const OpenedDevice& dev, const ManifestItem& item,
                        const store::KeyFields& fields, std::chrono::milliseconds timeout,
                        ItemReport& report) {
    auto entry = store_.get(fields);
    if (!entry) {
        report.result = WarmResult::failed;
        report.message = "known-answer test not run: the stored binary cannot be read";
        return;
    }
    canary::RunOptions options;
    options.helper = verify_helper_path();
    options.timeout = timeout;
    const canary::Verdict v = canary::run_caller_kat(dev.identity, item.name, item.kat,
                                                     entry->bytes, item.options, options);
    if (v.state != canary::VerdictState::validated) {
        report.result = WarmResult::failed;
        report.message = "known-answer test " + item.kat.filename().string() + " " +
                         (v.state == canary::VerdictState::suspect ? "failed" : "not run") + " (" +
                         v.check + "): " + v.detail;
    }
}

Program Warmer::request(Cache& cache, const OpenedDevice& dev, const WarmItem& item,
                        std::chrono::milliseconds timeout) {
    if (item.variant) {
        KernelRequest request;
        request.kernel = item.variant->kernel;
        request.params.insert(item.variant->params.begin(), item.variant->params.end());
        request.deadline = timeout;
        return cache.program(dev.context.get(), dev.device, request);
    }
    const ManifestItem& m = *item.manifest;
    SourceRequest request{m.name,         m.source,     m.options,
                          m.entry_points, m.local_size, timeout,
                          Mode::blocking, {},           {}};  // no KAT: warm runs it itself
    return cache.program(dev.context.get(), dev.device, request);
}

void Warmer::recheck(std::vector<ItemReport>& reports) {
    for (ItemReport& r : reports) {
        if (r.kept && !stored(*r.kept)) {
            r.result = WarmResult::not_stored;
            r.message = "evicted by this run's later builds: KCACHE_MAX_SIZE (" +
                        human_size(config_.max_bytes) + ") holds less than this warm needs";
        }
    }
}

std::optional<UploadReport> Warmer::flush_uploads(std::chrono::milliseconds limit) {
    std::lock_guard lock(mutex_);
    if (!cache_ || config_.remote_urls.empty() || config_.remote_read_only) {
        return std::nullopt;
    }
    cache_->drain(limit);
    const CacheStats s = cache_->stats();
    return UploadReport{s.remote_uploads, s.remote_upload_failures, cache_->upload_notes()};
}

Cache* Warmer::open_cache() {
    std::lock_guard lock(mutex_);
    if (!cache_ && open_error_.empty()) {
        Outcome opened;
        cache_ = Cache::open(config_, &opened);
        open_error_ = cache_ ? "" : "cannot open the cache: " + opened.message;
    }
    return cache_.get();
}

}  // namespace kcache::cli
