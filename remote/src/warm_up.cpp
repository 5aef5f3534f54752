// Client::warm_up: what a process's first download would otherwise do on
// the request's path, done at open on a thread of its own: each server's
// connection (and log-in), the breaker's first trial of each server, and
// the first decode of a payload.

#include <unistd.h>

#include <array>
#include <set>
#include <system_error>

#include "client_impl.hpp"
#include "kcache/store/codec.hpp"

namespace kcache::remote {
namespace {

// Probe keys tried per base URL to reach each server behind it: a Redis
// Cluster's keys land on its masters by slot, and 64 keys miss one of three
// masters with a chance of about 1e-11 (a missed one gets its trial from
// its first request, as without a warm-up).
constexpr int kProbeKeys = 64;

// The object URL under `base` of probe key `i`: a key no entry has (entry
// keys are SHA-256 digests), so its HEAD answers "not found".
std::string probe_url(const std::string& base, int i) {
    store::Key key;
    key.digest.fill(0);
    key.digest.back() = static_cast<std::uint8_t>(i);
    return url_under(base, key);
}

// Decodes a small payload once (zstd frame, XXH3-128 checksum): the first
// download's decode then finds that code in memory.
void warm_up_decoding() {
    std::array<std::uint8_t, 4096> raw{};
    for (std::size_t i = 0; i < raw.size(); ++i) {
        raw[i] = static_cast<std::uint8_t>((i * 131) >> 5);
    }
    const store::Encoded e = store::encode(raw, 3);
    (void)store::decode_verified(e.codec, e.data, raw.size(), store::checksum_of(raw));
}

}  // namespace

void Client::warm_up(WarmUp when) {
    if (impl_->warm_up_started.exchange(true)) {
        return;
    }
    if (when == WarmUp::now) {
        impl_->warm_up_servers();
        return;
    }
    try {
        impl_->warm_up_owner = ::getpid();
        impl_->warm_up_thread =
            std::make_unique<std::thread>([impl = impl_.get()] { impl->warm_up_servers(); });
    } catch (const std::system_error&) {
        // No thread: the first request connects, as without a warm-up.
    }
}

void Client::Impl::warm_up_servers() {
    for (const std::string& url : settings.base_urls) {
        Backend& backend = backends.of(url);
        if (closing.load() || breakers.of(backend.server_of(url)).marked_down()) {
            continue;
        }
        if (backend.warm_up(url, closing)) {
            try_servers(backend, url);  // not after a failed connect or log-in: one wait is enough
        }
    }
    warm_up_decoding();
}

// A HEAD of a probe object per server, sent only as the breaker's trial: when
// the node has no fresh up mark for the server and no other process is
// trying it. A node whose processes only hit locally thus sends about one a
// breaker window; a server that hangs costs this thread the one timeout that
// the first request would have cost, and marks it down for the node.
void Client::Impl::try_servers(Backend& backend, const std::string& base) {
    std::set<std::string> tried;
    for (int i = 0; i < kProbeKeys && !closing.load(); ++i) {
        const std::string url = probe_url(base, i);
        const std::string server = backend.server_of(url);
        if (!tried.insert(server).second) {
            continue;
        }
        Breaker& breaker = breakers.of(server);
        Breaker::Ticket ticket = breaker.allow(std::chrono::milliseconds(0));
        if (!ticket.trial_lock.valid()) {
            continue;  // confirmed up, skipped, or another process's trial
        }
        auto r = request(backend, Op::head, url);
        if (!r && r.error().error.code != RemoteErrc::not_found) {
            count_error(r.error().error);
        }
        judge(breaker, ticket, server, {&r, 1});
    }
}

}  // namespace kcache::remote
