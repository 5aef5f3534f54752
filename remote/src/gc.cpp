// Client::gc (kcache/remote/gc.hpp): every server's listing of the
// namespace's directory first (a listing that fails stops the run before
// anything is removed), then each old object removed through the server's
// breaker, one DELETE (Redis: DEL) each. The URLs removed are the listed
// directory followed by an object name of the layout (listing.hpp), so no
// answer of a server can point gc outside the namespace.

#include "client_impl.hpp"
#include "kcache/remote/namespaces.hpp"
#include "listing.hpp"

namespace kcache::remote {
namespace {

// "40d", "3h", "12m" or "9s": the age in its largest whole unit.
std::string age_text(std::chrono::seconds age) {
    const long long s = age.count();
    return s >= 86'400 ? std::to_string(s / 86'400) + "d"
           : s >= 3600 ? std::to_string(s / 3600) + "h"
           : s >= 60   ? std::to_string(s / 60) + "m"
                       : std::to_string(s) + "s";
}

}  // namespace

const char* to_string(GcOutcome outcome) {
    static constexpr const char* kNames[] = {"kept", "would_remove", "removed", "failed"};
    return kNames[static_cast<int>(outcome)];
}

Result<GcReport, RemoteError> Client::gc(const GcRequest& request) {
    if (std::string why = namespace_problem(request.name); !why.empty()) {
        return config_error(why);
    }
    if (request.mode == GcMode::remove && impl_->settings.access == Access::read_only) {
        return fail(RemoteError{RemoteErrc::read_only,
                                "read-only remote (KCACHE_REMOTE_READONLY): nothing is removed"});
    }
    const auto tell = [&](const std::string& line) {
        if (request.progress) {
            request.progress(without_passwords(line, impl_->settings.base_urls));
        }
    };
    GcReport report;
    for (std::string base : impl_->settings.base_urls) {
        if (base.empty() || base.back() != '/') {
            base += '/';
        }
        const std::string dir = base + namespace_dir(request.name);
        tell("listing " + dir);
        auto listed = impl_->backends.of(base).list(dir);
        if (!listed) {
            return fail(RemoteError{
                listed.error().error.code,
                without_passwords(listed.error().error.message, impl_->settings.base_urls)});
        }
        for (const ListedObject& o : *listed) {
            if (object_name(o.name)) {
                report.items.push_back({dir + o.name, o.age, GcOutcome::kept, ""});
            }
        }
    }
    for (GcItem& item : report.items) {
        ++report.listed;
        if (item.age <= request.older_than) {
            continue;
        }
        ++report.old;
        if (request.mode == GcMode::dry_run) {
            item.outcome = GcOutcome::would_remove;
            tell("would remove " + item.url + " (" + age_text(item.age) + " old)");
            continue;
        }
        auto removed = impl_->send(Op::remove, item.url);
        // One gone since the listing (another gc) is removed all the same.
        if (removed || removed.error().error.code == RemoteErrc::not_found) {
            item.outcome = GcOutcome::removed;
            ++report.removed;
            tell("removed " + item.url + " (" + age_text(item.age) + " old)");
        } else {
            item.outcome = GcOutcome::failed;
            item.error =
                without_passwords(removed.error().error.message, impl_->settings.base_urls);
            ++report.failed;
            tell("failed to remove " + item.url + ": " + item.error);
        }
    }
    return report;
}

}  // namespace kcache::remote
