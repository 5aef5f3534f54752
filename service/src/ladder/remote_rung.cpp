// The remote rung of the ladder (after the packs, before AOT): a verified
// download, loaded by the driver, then backfilled into the user store so the
// next process hits locally. Writers share what they build through the
// client's background queue.

#include <algorithm>

#include "kcache/canary/pack_trust.hpp"
#include "kcache/config/remote_tier.hpp"
#include "observe.hpp"
#include "rungs.hpp"

namespace kcache::service {

remote::Settings remote_settings(const Config& config) {
    remote::Settings s;
    s.base_urls = config.remote_urls;
    s.access = config.remote_read_only || config.read_only ? remote::Access::read_only
                                                           : remote::Access::read_write;
    s.timeout = config.remote_timeout;
    s.connect_timeout = config.remote_connect_timeout;
    s.token_file = config.remote_token_file;
    s.token_command = config.remote_token_command;
    s.token_lifetime = config.remote_token_lifetime;
    s.netrc = config.remote_netrc;
    s.ca_file = config.remote_ca;
    s.plain_http_token = config.remote_allow_http_token ? remote::PlainHttpToken::allow
                                                        : remote::PlainHttpToken::refuse;
    s.breaker_window = config.remote_breaker_window;
    s.ttl = config.remote_ttl;
    s.namespaces = remote_namespaces(config);
    s.state_dir = config.dir;
    s.signatures = config.remote_require_signed ? remote::ObjectSignatures::require
                                                : remote::ObjectSignatures::accept_unsigned;
    s.trusted_keys = trusted_keys(config);  // the same sources as packs
    // Read as trusted keys are: a file others could replace is left out.
    s.trusted_builders = store::TrustedKeys::load({}, trusted_builder_files(config));
    s.signing_key_file = config.remote_signing_key;
    s.s3 = remote_s3_settings(config);
    s.observe = remote_observer(config.metrics);  // get/put times and spans (observe.hpp)
    return s;
}

std::vector<std::filesystem::path> trusted_builder_files(const Config& config) {
    std::vector<std::filesystem::path> out;
    const auto it = config.origins.find("remote_trusted_builders");
    const std::string value = it == config.origins.end() ? "" : it->second.first;
    for (std::size_t pos = 0; pos < value.size();) {
        const std::size_t end = std::min(value.find(':', pos), value.size());
        if (end > pos) {
            out.emplace_back(value.substr(pos, end - pos));
        }
        pos = end + 1;
    }
    return out;
}

Result<std::unique_ptr<remote::Client>, remote::RemoteError> open_remote(const Config& config) {
    if (config.remote_urls.empty()) {
        return std::unique_ptr<remote::Client>();
    }
    auto client = remote::Client::open(remote_settings(config));
    if (!client) {
        return fail(
            remote::RemoteError{client.error().code, "remote tier: " + client.error().message});
    }
    return std::move(*client);
}

namespace {

MissCause cause_of(remote::RemoteErrc code) {
    switch (code) {
        case remote::RemoteErrc::not_found:
            return MissCause::not_found;
        case remote::RemoteErrc::corrupt:
        case remote::RemoteErrc::wrong_key:
        case remote::RemoteErrc::too_large:
            return MissCause::corrupt;
        case remote::RemoteErrc::breaker_open:
        case remote::RemoteErrc::read_only:
            return MissCause::skipped;
        default:
            return MissCause::io_error;
    }
}

// A miss, or with KCACHE_REMOTE_REQUIRED an answer: the remote failed
// (anything but not found) and the request fails with it.
Step fetch_failed(const Config& config, Ask& ask, const remote::RemoteError& e) {
    ask.out.misses.emplace_back(Rung::remote, cause_of(e.code),
                                std::string(remote::to_string(e.code)) + ": " + e.message);
    if (!config.remote_required || e.code == remote::RemoteErrc::not_found) {
        return Step::miss();
    }
    ask.out.status = StatusCode::store_error;
    ask.out.message = "remote tier failed (KCACHE_REMOTE_REQUIRED): " + e.message;
    return Step::answered();
}

}  // namespace

// Asked only when no stored tier holds the entry (one there but unusable
// would come back the same).
Step RemoteRung::attempt(Ask& ask) {
    const Plan& plan = ask.planned();
    if (!plan.use_stored || ask.entry_stored) {
        return Step::miss();  // the stored rung told why
    }
    if (parts_.remote == nullptr) {
        ask.out.misses.emplace_back(Rung::remote, MissCause::skipped,
                                    "no remote configured (KCACHE_REMOTE)");
        return Step::miss();
    }
    if (plan.verified_only) {
        ask.out.misses.emplace_back(
            Rung::remote, MissCause::not_verified,
            "skipped: remote entries are unverified (quirk verify_before_use)");
        return Step::miss();
    }
    auto got = parts_.remote->fetch(plan.key);
    if (!got) {
        return fetch_failed(parts_.config, ask, got.error());
    }
    // Built elsewhere: loaded in the helper first (the user store's backfilled
    // copy is the node's verdict, so no vouched/ record is kept), unless a
    // builder the operator trusts signed it (docs/design.md, "Binaries built
    // elsewhere").
    auto prog =
        load_checked(parts_, ask, got->bytes, {got->load_check == remote::LoadCheck::required, {}});
    if (!prog) {
        ask.out.misses.emplace_back(Rung::remote, MissCause::rejected_by_driver,
                                    "driver rejected the remote binary: " + prog.error());
        return Step::miss();
    }
    ask.out.rung = Rung::remote;
    // Stored by a worker (the next process of the node hits locally), kept resident.
    parts_.publish.publish(plan, std::move(got->bytes), got->provenance, Rung::remote,
                           Publisher::Share::now, &ask.out.misses);
    return Step::loaded(std::move(*prog));
}

}  // namespace kcache::service
