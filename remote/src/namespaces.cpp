// Namespaces (kcache/remote/namespaces.hpp): names, where their objects
// live, and lookups that try the namespaces in order, each checked against
// its own trusted keys and counted where it was asked.

#include "kcache/remote/namespaces.hpp"

#include <algorithm>
#include <optional>

#include "client_impl.hpp"
#include "kcache/store/key.hpp"

namespace kcache::remote {
namespace {

constexpr std::size_t kMaxName = 63;

bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

std::string trimmed(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) {
        return {};
    }
    return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

}  // namespace

std::string namespace_problem(std::string_view name) {
    if (name.empty()) {
        return "an empty namespace name";
    }
    if (name.size() > kMaxName) {
        return "namespace \"" + std::string(name.substr(0, kMaxName)) + "…\" is longer than " +
               std::to_string(kMaxName) + " characters";
    }
    const bool chars = std::all_of(name.begin(), name.end(), name_char);
    const bool first = (name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9');
    if (!chars || !first || name.find("..") != std::string_view::npos) {
        return "namespace \"" + std::string(name) +
               "\" is not a name: 1 to 63 of a-z, 0-9, '.', '_' and '-', starting with a letter "
               "or digit, without \"..\"";
    }
    return {};
}

Result<std::vector<std::string>, RemoteError> parse_namespaces(std::string_view list) {
    std::vector<std::string> out;
    if (trimmed(list).empty()) {
        return out;
    }
    for (std::size_t start = 0; start <= list.size();) {
        const std::size_t end = std::min(list.find(',', start), list.size());
        std::string name = trimmed(list.substr(start, end - start));
        if (std::string why = namespace_problem(name); !why.empty()) {
            return config_error(std::move(why));
        }
        if (std::find(out.begin(), out.end(), name) != out.end()) {
            return config_error("namespace \"" + name + "\" is named twice");
        }
        out.push_back(std::move(name));
        start = end + 1;
    }
    return out;
}

std::string namespace_dir(std::string_view name) {
    return name.empty() ? "kcache/v1/" : "kcache/ns/" + std::string(name) + "/v1/";
}

std::string object_path_in(std::string_view name, const store::Key& key) {
    const std::string hex = key.hex();
    return namespace_dir(name) + hex.substr(0, 2) + "/" + hex;
}

std::vector<std::filesystem::path> namespace_trust_dirs(
    const std::vector<std::filesystem::path>& trusted_dirs, std::string_view name) {
    std::vector<std::filesystem::path> out;
    for (const std::filesystem::path& d : trusted_dirs) {
        out.push_back(d / "namespaces" / std::string(name));
    }
    return out;
}

Status<RemoteError> check_namespaces(const Settings& settings) {
    std::vector<std::string> seen;
    for (const Namespace& n : settings.namespaces) {
        std::string why = namespace_problem(n.name);
        if (why.empty() && std::find(seen.begin(), seen.end(), n.name) != seen.end()) {
            why = "namespace \"" + n.name + "\" is named twice";
        }
        if (!why.empty()) {
            return config_error("KCACHE_REMOTE_NAMESPACE: " + why);
        }
        seen.push_back(n.name);
    }
    return Ok{};
}

std::vector<NamespaceState> namespace_states(const Settings& settings) {
    std::vector<NamespaceState> out(settings.namespaces.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
        // A builder is one in this namespace only when the namespace trusts its key.
        for (const store::TrustedKey& k : settings.trusted_builders.keys()) {
            for (const store::TrustedKey* t :
                 settings.namespaces[i].trusted_keys.matching(k.key.id)) {
                if (t->key.key == k.key.key) {
                    out[i].builders.add(k);
                }
            }
        }
    }
    return out;
}

void Client::Impl::count_in(std::size_t in, const Result<Envelope, RemoteError>& env) {
    AtomicCounters& c = ns[in].counters;
    if (env) {
        c.hits++;
        c.builder_hits += env->by_builder ? 1 : 0;
        return;
    }
    c.misses++;
    switch (env.error().code) {
        case RemoteErrc::not_found:
        case RemoteErrc::breaker_open:
        case RemoteErrc::read_only:
            break;
        case RemoteErrc::timeout:
            c.timeouts++;
            break;
        case RemoteErrc::corrupt:
        case RemoteErrc::wrong_key:
        case RemoteErrc::too_large:
            c.corrupt++;
            break;
        default:
            c.errors++;
    }
}

Result<Envelope, RemoteError> Client::Impl::fetch_object(const store::Key& key) {
    if (settings.namespaces.empty()) {
        return get_object(key, url_of(settings, key));
    }
    return std::move(fetch_objects({key}).front());
}

std::vector<Result<Envelope, RemoteError>> Client::Impl::fetch_objects(
    const std::vector<store::Key>& keys) {
    std::vector<std::optional<Result<Envelope, RemoteError>>> found(keys.size());
    std::vector<std::optional<RemoteError>> first_error(keys.size());
    const std::size_t spaces = std::max<std::size_t>(1, settings.namespaces.size());
    for (std::size_t in = 0; in < spaces; ++in) {
        std::vector<std::size_t> asked;  // indices into `keys` still missing
        std::vector<std::string> urls;
        for (std::size_t i = 0; i < keys.size(); ++i) {
            if (!found[i]) {
                asked.push_back(i);
                urls.push_back(url_in(settings, in, keys[i]));
            }
        }
        if (asked.empty()) {
            break;
        }
        auto answers = send_many(Op::get, urls);
        for (std::size_t k = 0; k < asked.size(); ++k) {
            const std::size_t i = asked[k];
            auto env = decode_object(keys[i], urls[k], std::move(answers[k]), in);
            if (!settings.namespaces.empty()) {
                count_in(in, env);
            }
            if (env) {
                found[i] = std::move(env);
            } else if (!first_error[i] && env.error().code != RemoteErrc::not_found) {
                first_error[i] = env.error();
            } else if (!first_error[i] && in + 1 == spaces) {
                first_error[i] = env.error();
            }
        }
    }
    std::vector<Result<Envelope, RemoteError>> out;
    for (std::size_t i = 0; i < keys.size(); ++i) {
        out.push_back(found[i] ? std::move(*found[i])
                               : Result<Envelope, RemoteError>(fail(std::move(*first_error[i]))));
    }
    return out;
}

NamespaceCounters Client::namespace_counters() const {
    NamespaceCounters out;
    for (std::size_t i = 0; i < impl_->ns.size(); ++i) {
        Counters c = snapshot(impl_->ns[i].counters);
        if (i == 0) {  // every upload goes to the own namespace
            c.uploads = impl_->counters.uploads;
            c.upload_failures = impl_->counters.upload_failures;
        }
        out[impl_->settings.namespaces[i].name] = c;
    }
    return out;
}

}  // namespace kcache::remote
