// The in-process rung (see program_cache.hpp for how programs are let go).

#include "program_cache.hpp"
#include "kcache/common/hot_path.hpp"

#include <atomic>
#include <tuple>

namespace kcache::service {

KCACHE_HOT_PATH std::string request_signature(const KernelRequest& r) {
    std::string s = "K" + r.kernel;
    for (const auto& [k, v] : r.params) {  // std::map: already in a canonical order
        s += '\0' + k + '=' + v;
    }
    return s;
}

std::string request_signature(const SourceRequest& r) {
    std::string s = "S" + r.source + '\0' + r.options + '\0';
    for (const auto& e : r.entry_points) {
        s += e + '\1';
    }
    s += '\0' + std::to_string(r.warmup_local_size);
    for (const LinkUnit& u : r.link) {  // sizes first: no unit's text ends another's
        s += '\2' + std::to_string(u.source.size()) + ':' + u.source +
             std::to_string(u.options.size()) + ':' + u.options;
        for (const auto& [name, text] : u.headers) {
            s += '\3' + std::to_string(name.size()) + ':' + name + std::to_string(text.size()) +
                 ':' + text;
        }
    }
    return s;
}

namespace {

// Whether `platform` (`device`'s, asked for when null) counts a program's
// reference in its context's CL_CONTEXT_REFERENCE_COUNT, probed on `context`
// the first time.
bool platform_counts_programs(Loader& loader, cl_context context, cl_device_id device,
                              cl_platform_id platform) {
    static std::mutex mu;
    static std::map<cl_platform_id, bool> known;
    if (platform == nullptr) {
        platform = loader.platform_of(device);
    }
    {
        std::lock_guard g(mu);
        if (auto it = known.find(platform); it != known.end()) {
            return it->second;
        }
    }
    const bool counts = loader.counts_programs(context);
    std::lock_guard g(mu);
    return known.emplace(platform, counts).first->second;
}

struct Slot {
    cl_context context;
    cl_device_id device;
    store::Key key;
    ProgramRef program;
};
using Slots = std::list<Slot>;  // front: most recently used

// The request signatures that resolved to each slot, by (context, device)
// then signature: each pair's signatures are neighbours.
using Pair = std::pair<cl_context, cl_device_id>;
using SignatureKey = HandlesAndText<Pair>;
using SignatureView = HandlesAndTextView<Pair>;
using Signatures = std::map<SignatureKey, Slots::iterator, HandlesThenText>;

struct ContextEntry {
    std::size_t programs = 0;
    bool counts_programs = false;
    cl::ContextHandle held;  // the cache's own reference on the context
};

}  // namespace

struct ProgramCache::State {
    State(std::size_t m, Loader& l) : max(m), loader(l) {}

    const std::size_t max;
    Loader& loader;
    std::mutex mu;  // guards everything below
    Slots lru;
    std::map<std::tuple<cl_context, cl_device_id, store::Key>, Slots::iterator> slots;
    Signatures signatures;  // the request signatures that resolved to each slot
    std::unordered_map<cl_context, ContextEntry> contexts;
    std::atomic<std::uint64_t> released{0};

    // Unlinks `it` everywhere; moves its program (and the context's reference
    // when it was the context's last) to `out`.
    void unlink(Slots::iterator it, Released& out) {
        out.programs.push_back(std::move(it->program));  // first: the only step that can throw
        const Pair pair{it->context, it->device};
        for (auto s = signatures.lower_bound(SignatureView{pair, {}});
             s != signatures.end() && s->first.handles == pair;) {
            s = s->second == it ? signatures.erase(s) : std::next(s);
        }
        if (auto c = contexts.find(it->context); c != contexts.end() && --c->second.programs == 0) {
            out.contexts.push_back(std::move(c->second.held));
            contexts.erase(c);
        }
        slots.erase({it->context, it->device, it->key});
        lru.erase(it);
        released++;
    }

    // Remembers that `signature` resolved to the program of `slot`.
    void link(Slots::iterator slot, const std::string& signature) {
        signatures.try_emplace(SignatureKey{{slot->context, slot->device}, signature}, slot);
    }

    void drop_context(cl_context context, Released& out) {
        for (auto it = lru.begin(); it != lru.end();) {
            auto next = std::next(it);
            if (it->context == context) {
                unlink(it, out);
            }
            it = next;
        }
    }

    // The sweep (see program_cache.hpp); whether contexts are still kept.
    // `in_use` (a request's own context, which its caller holds) is not asked.
    bool sweep(Released& out, cl_context in_use = nullptr) {
        std::vector<cl_context> only_ours;
        for (const auto& [context, entry] : contexts) {
            const std::size_t ours = 1 + (entry.counts_programs ? entry.programs : 0);
            if (context != in_use && loader.context_references(context) <= ours) {
                only_ours.push_back(context);
            }
        }
        for (auto c : only_ours) {
            drop_context(c, out);
        }
        return !contexts.empty();
    }
    // The bound: the least recently used programs beyond `max`.
    void trim(Released& out) {
        while (lru.size() > max) {
            unlink(std::prev(lru.end()), out);
        }
    }
};

ProgramCache::ProgramCache(std::size_t max_programs, Loader& loader,
                           std::function<void()> background)
    : state_(std::make_unique<State>(max_programs, loader)),
      releaser_(std::make_unique<Releaser>(
          [state = state_.get()](Released& out) {
              std::lock_guard g(state->mu);
              return state->sweep(out);
          },
          kSweepPeriod, kIdleWait, std::move(background))) {}

void ProgramCache::start_releaser_early() noexcept {
    releaser_->start_early();
}

ProgramCache::~ProgramCache() {
    // The releaser first: its sweep asks about the contexts kept here, which
    // must not be released under it.
    releaser_.reset();
    Released dropped;  // released after the lock
    std::lock_guard g(state_->mu);
    for (auto& s : state_->lru) {
        dropped.programs.push_back(std::move(s.program));
    }
    for (auto& [context, entry] : state_->contexts) {
        dropped.contexts.push_back(std::move(entry.held));
    }
    state_->contexts.clear();
}

KCACHE_HOT_PATH ProgramCache::SignatureHit ProgramCache::find_signature(
    cl_context context, cl_device_id device, const std::string& signature) {
    State& s = *state_;
    std::lock_guard g(s.mu);
    SignatureHit hit;
    const Pair pair{context, device};
    const SignatureView view{pair, signature};
    auto it = s.signatures.lower_bound(view);
    const auto same_pair = [&](Signatures::iterator i) { return i->first.handles == pair; };
    if (it != s.signatures.end() && same_pair(it) && it->first.text == signature) {
        Slots::iterator slot = it->second;
        s.lru.splice(s.lru.begin(), s.lru, slot);
        hit.program = s.loader.retain(slot->program.get());  // the caller's own reference
        hit.key = slot->key;
        hit.context_known = true;
        return hit;
    }
    hit.context_known = (it != s.signatures.end() && same_pair(it)) ||
                        (it != s.signatures.begin() && same_pair(std::prev(it)));
    return hit;
}

cl_program ProgramCache::find(cl_context context, cl_device_id device, const store::Key& key,
                              const std::string& signature) {
    State& s = *state_;
    std::lock_guard g(s.mu);
    auto it = s.slots.find({context, device, key});
    if (it == s.slots.end()) {
        return nullptr;
    }
    s.lru.splice(s.lru.begin(), s.lru, it->second);
    s.link(it->second, signature);
    return s.loader.retain(it->second->program.get());
}

KCACHE_HOT_PATH cl_program ProgramCache::insert(cl_context context, cl_device_id device,
                                                cl_platform_id platform, const store::Key& key,
                                                ProgramRef program, const std::string& signature) {
    const bool counts = platform_counts_programs(state_->loader, context, device, platform);
    State& s = *state_;
    Released dropped;  // released after the lock, before returning
    std::unique_lock g(s.mu);
    if (auto it = s.slots.find({context, device, key}); it != s.slots.end()) {
        s.lru.splice(s.lru.begin(), s.lru, it->second);  // another thread kept one first
        s.link(it->second, signature);
        cl_program kept = s.loader.retain(it->second->program.get());
        dropped.programs.push_back(std::move(program));
        return kept;
    }
    cl_program answer = s.loader.retain(program.get());  // the caller's own reference
    if (s.max == 0) {
        dropped.programs.push_back(std::move(program));
        return answer;
    }
    auto [entry, first] = s.contexts.try_emplace(context);
    if (first) {
        entry->second.counts_programs = counts;
        entry->second.held = s.loader.retain(context);
    }
    entry->second.programs++;
    s.lru.push_front(Slot{context, device, key, std::move(program)});
    s.slots.emplace(std::make_tuple(context, device, key), s.lru.begin());
    s.link(s.lru.begin(), signature);
    Released swept;
    s.sweep(swept, context);
    s.trim(swept);
    g.unlock();
    releaser_->hand_over(std::move(swept));  // released off the caller's path
    return answer;
}

std::size_t ProgramCache::forget(cl_context context) noexcept {
    Released dropped;
    try {
        std::lock_guard g(state_->mu);
        state_->drop_context(context, dropped);
    } catch (...) {  // out of memory: what was unlinked so far is still released
    }
    return dropped.programs.size();
}

std::size_t ProgramCache::size() const {
    std::lock_guard g(state_->mu);
    return state_->lru.size();
}

void ProgramCache::prefetch() const noexcept {
    prefetch_lines(state_.get(), sizeof(State));
}

std::uint64_t ProgramCache::released() const {
    return state_->released;
}

}  // namespace kcache::service
