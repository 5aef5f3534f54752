// The doctor's probe (Client::probe): GET and HEAD of an object nobody
// stored, and for writers a PUT read back by a GET, then a DELETE; each a
// line saying whether the server answered as an object store must. Sent
// past the breaker: the doctor asks even a server marked down.

#include <unistd.h>

#include <algorithm>
#include <functional>

#include "client_impl.hpp"
#include "kcache/common/sha256.hpp"
#include "kcache/store/key.hpp"

namespace kcache::remote {

namespace {

// The first bytes of `body` as text for a message (the caller escapes it).
std::string body_start(const store::Bytes& body) {
    return "\"" + std::string(body.begin(), body.begin() + std::min<std::size_t>(body.size(), 24)) +
           (body.size() > 24 ? "…\"" : "\"");
}

// Why an answer is not a healthy one ("" when it is).
using ProbeCheck = std::function<std::string(const Reply&)>;

// The doctor's requests on the probe object's URL, each a line of `out`.
struct ProbeRequests {
    Backend& backend;
    const std::string& url;
    std::vector<ProbeLine>& out;

    // One request; `good` says whether its answer is healthy and why not.
    bool line(const char* what, Op op, std::span<const std::uint8_t> body, const ProbeCheck& good) {
        auto r = request(backend, op, url, body);
        const std::optional<Reply> a = answered(r);
        ProbeLine l{what, false, a ? "" : r.error().error.message};
        if (a) {
            const std::string why = good(*a);
            l.ok = why.empty();
            l.detail = std::string(what) + " " + url + ": HTTP " + std::to_string(a->status) +
                       (why.empty() ? "" : "; " + why);
            if (!l.ok && !r) {
                l.detail += " (" + r.error().error.message + ")";  // what the server said
            }
        }
        out.push_back(std::move(l));
        return out.back().ok;
    }
};

ProbeCheck status_in(std::initializer_list<long> ok) {
    return [ok](const Reply& r) {
        return std::find(ok.begin(), ok.end(), r.status) != ok.end() ? "" : "unexpected status";
    };
}

// A GET of the probe key: 404, or exactly the probe body.
std::string nobodys(const Reply& r, const store::Bytes& probe_body) {
    if (r.status == 404 || (r.status == 200 && r.body == probe_body)) {
        return "";
    }
    return r.status != 200
               ? "unexpected status"
               : "a body for an object nobody stored (" + std::to_string(r.body.size()) +
                     " bytes, " + body_start(r.body) + "): not a kcache object store";
}

// A PUT of the probe body, accepted (`accepted`) and given back by a GET.
std::string stored(const Reply& r, ProbeRequests& p, const store::Bytes& probe_body,
                   bool& accepted) {
    accepted = r.status == 200 || r.status == 201 || r.status == 204;
    if (!accepted) {
        return "unexpected status";
    }
    auto back = request(p.backend, Op::get, p.url);
    const std::optional<Reply> b = answered(back);
    return !b ? "reading it back failed: " + back.error().error.message
           : b->status != 200 || b->body != probe_body
               ? "a GET does not give back what was put (HTTP " + std::to_string(b->status) + ", " +
                     std::to_string(b->body.size()) + " bytes)"
               : "";
}

}  // namespace

// The probe object's key (sha256 of a name no entry has) is nobody's: a GET
// must answer 404, or 200 with exactly the probe body (one an earlier probe
// of this process id left); anything else is a server that answers every
// path, whatever it holds. A writer's PUT counts only once a GET gives back
// the very bytes put.
std::vector<ProbeLine> Client::probe() {
    store::Key key;
    const std::string id = "kcache doctor probe " + std::to_string(::getpid());
    (void)key.parse_hex(kcache::sha256_hex(id));
    const std::string url = object_url(key);
    const std::string text = "kcache probe object; safe to delete\n";
    const store::Bytes probe_body(text.begin(), text.end());
    std::vector<ProbeLine> out;
    ProbeRequests p{impl_->backends.of(url), url, out};
    p.line("GET", Op::get, {}, [&](const Reply& r) { return nobodys(r, probe_body); });
    p.line("HEAD", Op::head, {}, status_in({200, 404}));
    if (impl_->settings.access == Access::read_write) {
        bool accepted = false;  // then the object is deleted, whatever a GET gives back
        p.line("PUT", Op::put, probe_body,
               [&](const Reply& r) { return stored(r, p, probe_body, accepted); });
        if (accepted) {
            p.line("DELETE", Op::remove, {}, status_in({200, 204}));
        }
    }
    return out;
}

}  // namespace kcache::remote
