// Requests of many objects at once (kcache push and pull): grouped by
// server, each group one batch through that server's breaker, which the
// backend may pipeline (Backend::get_many, put_many).

#include <algorithm>
#include <map>

#include "client_impl.hpp"
#include "kcache/store/key.hpp"

namespace kcache::remote {

void Client::Impl::send_batch(Op op, Backend& backend, const std::string& server,
                              const std::vector<std::string>& urls,
                              const std::vector<std::span<const std::uint8_t>>& bodies,
                              const std::vector<std::size_t>& indices,
                              std::vector<std::optional<Result<Reply, Failure>>>& answers) {
    Breaker& breaker = breakers.of(server);
    Breaker::Ticket ticket = breaker.allow();
    if (!ticket.allowed) {
        for (std::size_t i : indices) {
            answers[i] = fail(
                Failure{RemoteError{RemoteErrc::breaker_open, server + ": " + ticket.why_not}});
        }
        return;
    }
    std::vector<Result<Reply, Failure>> got;
    if (op == Op::put) {
        std::vector<PutItem> items;
        for (std::size_t i : indices) {
            items.push_back({urls[i], bodies[i]});
        }
        got = backend.put_many(items);
    } else {
        std::vector<std::string> group;
        for (std::size_t i : indices) {
            group.push_back(urls[i]);
        }
        got = backend.get_many(group);
    }
    judge(breaker, ticket, server, got);
    for (std::size_t k = 0; k < indices.size(); ++k) {
        answers[indices[k]] = std::move(got[k]);
    }
}

std::vector<Result<Reply, Failure>> Client::Impl::send_many(
    Op op, const std::vector<std::string>& urls,
    const std::vector<std::span<const std::uint8_t>>& bodies) {
    std::vector<std::optional<Result<Reply, Failure>>> answers(urls.size());
    // Indices by backend and server, in the order of `urls`.
    std::map<std::pair<Backend*, std::string>, std::vector<std::size_t>> groups;
    for (std::size_t i = 0; i < urls.size(); ++i) {
        Backend& backend = backends.of(urls[i]);
        groups[{&backend, backend.server_of(urls[i])}].push_back(i);
    }
    for (const auto& [where, all] : groups) {
        const auto& [backend, server] = where;
        const std::size_t limit = std::max<std::size_t>(1, backend->batch_limit());
        for (std::size_t first = 0; first < all.size(); first += limit) {
            const std::vector<std::size_t> indices(
                all.begin() + static_cast<std::ptrdiff_t>(first),
                all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), first + limit)));
            send_batch(op, *backend, server, urls, bodies, indices, answers);
        }
    }
    std::vector<Result<Reply, Failure>> out;
    for (auto& a : answers) {
        out.push_back(std::move(*a));
    }
    return out;
}

namespace {

// The keys and object URLs of `fields`.
std::pair<std::vector<store::Key>, std::vector<std::string>> keys_and_urls(
    const Settings& settings, const std::vector<store::KeyFields>& fields) {
    std::pair<std::vector<store::Key>, std::vector<std::string>> out;
    for (const store::KeyFields& f : fields) {
        out.first.push_back(store::make_key(f));
        out.second.push_back(url_of(settings, out.first.back()));
    }
    return out;
}

}  // namespace

std::vector<Result<Fetched, RemoteError>> Client::fetch_many(
    const std::vector<store::KeyFields>& fields) {
    std::vector<store::Key> keys;
    for (const store::KeyFields& f : fields) {
        keys.push_back(store::make_key(f));
    }
    const auto start = std::chrono::steady_clock::now();
    auto envs = impl_->fetch_objects(keys);  // namespaces.cpp: each namespace in order
    std::vector<Result<Fetched, RemoteError>> out;
    for (auto& env : envs) {
        if (impl_->settings.observe) {
            impl_->settings.observe(RemoteOp::get, start, env.ok());
        }
        out.push_back(impl_->fetched(std::move(env)));
    }
    return out;
}

std::vector<Result<Held, RemoteError>> Client::held_many(
    const std::vector<store::KeyFields>& fields) {
    const auto [keys, urls] = keys_and_urls(impl_->settings, fields);
    auto answers = impl_->send_many(Op::get, urls);
    std::vector<Result<Held, RemoteError>> out;
    for (std::size_t i = 0; i < answers.size(); ++i) {
        out.push_back(
            impl_->held_of(impl_->decode_object(keys[i], urls[i], std::move(answers[i]))));
    }
    return out;
}

std::vector<Status<RemoteError>> Client::upload_many(const std::vector<UploadItem>& items) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::optional<Status<RemoteError>>> done(items.size());
    std::vector<store::Bytes> objects;
    std::vector<std::size_t> sent;  // indices of the objects that go out
    std::vector<std::string> urls;
    for (std::size_t i = 0; i < items.size(); ++i) {
        auto object = impl_->prepare_upload(*items[i].fields, items[i].bytes, *items[i].provenance);
        if (!object) {
            done[i] = fail(std::move(object.error()));
            continue;
        }
        objects.push_back(std::move(*object));
        sent.push_back(i);
        urls.push_back(url_of(impl_->settings, store::make_key(*items[i].fields)));
    }
    const std::vector<std::span<const std::uint8_t>> bodies(objects.begin(), objects.end());
    auto answers = impl_->send_many(Op::put, urls, bodies);
    for (std::size_t k = 0; k < sent.size(); ++k) {
        done[sent[k]] = impl_->uploaded(std::move(answers[k]));
    }
    std::vector<Status<RemoteError>> out;
    for (auto& d : done) {
        if (impl_->settings.observe) {
            impl_->settings.observe(RemoteOp::put, start, d->ok());
        }
        out.push_back(std::move(*d));
    }
    return out;
}

}  // namespace kcache::remote
