// Where objects live on the server (layout and sharding), error names, and
// the node's persisted remote counters.
//
// Stats file, <state_dir>/remote-stats, replaced by rename under a flock of
// <state_dir>/remote-stats.lock:
//   line  := name ' ' decimal '\n'      ; names as in Counters; unknown ones ignored

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <sstream>

#include "client_impl.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/common/unique_fd.hpp"

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
    {"hits", &Counters::hits},
    {"misses", &Counters::misses},
    {"errors", &Counters::errors},
    {"timeouts", &Counters::timeouts},
    {"corrupt", &Counters::corrupt},
    {"uploads", &Counters::uploads},
    {"upload_failures", &Counters::upload_failures},
    {"builder_hits", &Counters::builder_hits},
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

std::string url_of(const Settings& settings, const store::Key& key) {
    return url_under(shard_of(settings.base_urls, key), key);
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

Counters read_stats_file(const std::filesystem::path& state_dir) {
    Counters c;
    // Through the bounded reader: a FIFO or a device in its place reads as no counters.
    auto text = read_regular_file(state_dir / "remote-stats", kMaxStateFileBytes);
    std::istringstream in(text ? std::move(*text) : std::string());
    std::string name;
    std::uint64_t value = 0;
    while (in >> name >> value) {
        for (const auto& [n, member] : kFields) {
            if (name == n) {
                c.*member = value;
            }
        }
    }
    return c;
}

bool add_to_stats_file(const std::filesystem::path& state_dir, const Counters& delta) {
    if (state_dir.empty()) {
        return false;
    }
    UniqueFd lock(
        ::open((state_dir / "remote-stats.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!lock.valid() || ::flock(lock.get(), LOCK_EX) != 0) {
        return false;
    }
    Counters sum = read_stats_file(state_dir);
    const auto path = state_dir / "remote-stats";
    auto tmp = path;
    tmp += ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(tmp, std::ios::trunc);
        for (const auto& [n, member] : kFields) {
            out << n << " " << (sum.*member + delta.*member) << "\n";
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
