// Where objects live on the server (layout and sharding), error names, and
// the node's persisted remote counters.
//
// Stats file, <state_dir>/remote-stats, replaced by rename under a flock of
// <state_dir>/remote-stats.lock:
//   line  := name ' ' decimal '\n'      ; names as in Counters; unknown ones ignored
//          | "ns." namespace '.' name ' ' decimal '\n'   ; one namespace's counter

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "client_impl.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/common/unique_fd.hpp"
#include "kcache/remote/namespaces.hpp"

namespace kcache::remote {
namespace {

// FNV-1a 64: stable across builds and machines, which is all rendezvous
// hashing needs (the key itself is already uniformly distributed).
std::uint64_t fnv1a(std::string_view a, std::string_view b) {
    std::uint64_t h = 1469598103934665603ull;
    for (std::string_view part : {a, std::string_view("\n", 1), b}) {
        for (char c : part) {
            h ^= static_cast<unsigned char>(c);
            h *= 1099511628211ull;
        }
    }
    return h;
}

using Fields = std::pair<const char*, std::uint64_t Counters::*>;
constexpr Fields kFields[] = {
#define KCACHE_REMOTE_COUNTER(field, doc) {#field, &Counters::field},
#include "kcache/remote/counters.def"
#undef KCACHE_REMOTE_COUNTER
};

}  // namespace

const char* to_string(RemoteErrc code) {
    static constexpr const char* kNames[] = {
        "not_found", "corrupt", "wrong_key",   "too_large", "http_status",
        "redirects", "timeout", "unreachable", "tls",       "breaker_open",
        "read_only", "config",  "transport"};
    return kNames[static_cast<int>(code)];
}

std::string object_path(const store::Key& key) {
    const std::string hex = key.hex();
    return "kcache/v1/" + hex.substr(0, 2) + "/" + hex;
}

const std::string& shard_of(const std::vector<std::string>& urls, const store::Key& key) {
    const std::string hex = key.hex();
    std::size_t best = 0;
    std::uint64_t best_score = 0;
    for (std::size_t i = 0; i < urls.size(); ++i) {
        const std::uint64_t score = fnv1a(urls[i], hex);
        if (i == 0 || score > best_score) {
            best = i;
            best_score = score;
        }
    }
    return urls[best];
}

std::string url_under(std::string base, const store::Key& key) {
    if (base.empty() || base.back() != '/') {
        base += '/';
    }
    return base + object_path(key);
}

std::string url_in(const Settings& settings, std::size_t in, const store::Key& key) {
    std::string base = shard_of(settings.base_urls, key);
    if (settings.namespaces.empty()) {
        return url_under(std::move(base), key);
    }
    if (base.empty() || base.back() != '/') {
        base += '/';
    }
    return base + object_path_in(settings.namespaces[in].name, key);
}

std::string url_of(const Settings& settings, const store::Key& key) {
    return url_in(settings, 0, key);
}

const std::string& Client::shard_for(const store::Key& key) const {
    return shard_of(impl_->settings.base_urls, key);
}

std::string Client::object_url(const store::Key& key) const {
    return url_of(impl_->settings, key);
}

bool trips_breaker(RemoteErrc code, long status, bool retry_after) {
    switch (code) {
        case RemoteErrc::timeout:
        case RemoteErrc::unreachable:
        case RemoteErrc::tls:
        case RemoteErrc::transport:
            return true;
        case RemoteErrc::http_status:
            return status >= 500 || status == 429 ||
                   ((status == 401 || status == 403) && retry_after);
        default:
            return false;
    }
}

namespace {

// The counters of the stats file's text `text`: the totals, and into
// `by_namespace` (when given) each namespace's.
Counters parse_stats(const std::string& text, NamespaceCounters* by_namespace) {
    Counters c;
    std::istringstream in(text);
    std::string name;
    std::uint64_t value = 0;
    while (in >> name >> value) {
        Counters* into = &c;
        if (name.rfind("ns.", 0) == 0) {
            const auto dot = name.rfind('.');
            if (by_namespace == nullptr || dot <= 3) {
                continue;
            }
            into = &(*by_namespace)[name.substr(3, dot - 3)];
            name.erase(0, dot + 1);
        }
        for (const auto& [n, member] : kFields) {
            if (name == n) {
                into->*member = value;
            }
        }
    }
    return c;
}

std::string stats_text(const std::filesystem::path& state_dir) {
    // Through the bounded reader: a FIFO or a device in its place reads as no counters.
    auto text = read_regular_file(state_dir / "remote-stats", kMaxStateFileBytes);
    return text ? std::move(*text) : std::string();
}

void write_counters(std::ostream& out, const std::string& prefix, const Counters& a,
                    const Counters& b) {
    for (const auto& [n, member] : kFields) {
        out << prefix << n << " " << (a.*member + b.*member) << "\n";
    }
}

}  // namespace

Counters read_stats_file(const std::filesystem::path& state_dir) {
    return parse_stats(stats_text(state_dir), nullptr);
}

NamespaceCounters read_namespace_stats(const std::filesystem::path& state_dir) {
    NamespaceCounters out;
    (void)parse_stats(stats_text(state_dir), &out);
    return out;
}

bool add_to_stats_file(const std::filesystem::path& state_dir, const Counters& delta,
                       const NamespaceCounters& by_namespace) {
    if (state_dir.empty()) {
        return false;
    }
    UniqueFd lock(
        ::open((state_dir / "remote-stats.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0) {
        return false;
    }
    NamespaceCounters sums;
    const Counters sum = parse_stats(stats_text(state_dir), &sums);
    for (const auto& [name, counters] : by_namespace) {
        (void)sums[name];  // a namespace of this delta only
    }
    const auto path = state_dir / "remote-stats";
    auto tmp = path;
    tmp += ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::trunc);
        write_counters(out, "", sum, delta);
        for (const auto& [name, counters] : sums) {
            const auto it = by_namespace.find(name);
            write_counters(out, "ns." + name + ".", counters,
                           it == by_namespace.end() ? Counters{} : it->second);
        }
        if (!out.flush()) {
            return false;
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    return !ec;
}

}  // namespace kcache::remote
