// The in-process rung (see program_cache.hpp for how programs are let go).

#include "program_cache.hpp"

#include <dlfcn.h>

#include <atomic>
#include <tuple>

namespace kcache::service {

std::string request_signature(const KernelRequest& r) {
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
    return s + '\0' + std::to_string(r.warmup_local_size);
}

namespace {

using DestructorCallbackFn = cl_int(CL_API_CALL*)(cl_context, void(CL_CALLBACK*)(cl_context, void*),
                                                  void*);

// What a platform's driver does that the release scheme depends on.
struct PlatformTraits {
    bool counts_programs = false;  // a program's reference shows in CL_CONTEXT_REFERENCE_COUNT
    DestructorCallbackFn destructor_callback = nullptr;  // OpenCL 3.0 drivers only
};

cl_uint reference_count(cl_context context) {
    cl_uint n = 0;
    if (clGetContextInfo(context, CL_CONTEXT_REFERENCE_COUNT, sizeof(n), &n, nullptr) !=
        CL_SUCCESS) {
        return 0;
    }
    return n;
}

// Whether creating a program on `context` raises its reference count by one
// and releasing it lowers it again (three tries, since other threads may
// retain or release the context meanwhile).
bool counts_programs(cl_context context) {
    static const char* kSource = "kernel void kcache_probe(void) {}";
    for (int attempt = 0; attempt < 3; ++attempt) {
        cl_int err = CL_SUCCESS;
        const cl_uint before = reference_count(context);
        ProgramRef probe(clCreateProgramWithSource(context, 1, &kSource, nullptr, &err));
        if (!probe || err != CL_SUCCESS) {
            return false;
        }
        const cl_uint during = reference_count(context);
        probe.reset();
        const cl_uint after = reference_count(context);
        if (before > 0 && during == before + 1 && after == before) {
            return true;
        }
        if (during == before && after == before) {
            return false;
        }
    }
    return false;
}

// The traits of `device`'s platform, probed on `context` the first time.
PlatformTraits traits_of(cl_context context, cl_device_id device) {
    static std::mutex mu;
    static std::map<cl_platform_id, PlatformTraits> known;
    cl_platform_id platform = nullptr;
    clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof(platform), &platform, nullptr);
    {
        std::lock_guard g(mu);
        if (auto it = known.find(platform); it != known.end()) {
            return it->second;
        }
    }
    PlatformTraits t;
    t.counts_programs = counts_programs(context);
    char version[64] = {};
    clGetPlatformInfo(platform, CL_PLATFORM_VERSION, sizeof(version) - 1, version, nullptr);
    if (std::string_view(version).starts_with("OpenCL 3.")) {
        // Looked up, not linked: an older ICD loader lacks the symbol.
        t.destructor_callback = reinterpret_cast<DestructorCallbackFn>(
            ::dlsym(RTLD_DEFAULT, "clSetContextDestructorCallback"));
    }
    std::lock_guard g(mu);
    return known.emplace(platform, t).first->second;
}

struct Slot {
    cl_context context;
    cl_device_id device;
    store::Key key;
    ProgramRef program;
    std::vector<std::string> signatures;  // that resolved to this slot
};
using Slots = std::list<Slot>;  // front: most recently used

struct ContextEntry {
    std::size_t programs = 0;
    bool counts_programs = false;
};

}  // namespace

struct ProgramCache::State {
    explicit State(std::size_t m) : max(m) {}

    const std::size_t max;
    std::mutex mu;  // guards everything below
    Slots lru;
    std::map<std::tuple<cl_context, cl_device_id, store::Key>, Slots::iterator> slots;
    std::map<std::pair<cl_context, cl_device_id>, std::unordered_map<std::string, Slots::iterator>>
        signatures;
    std::unordered_map<cl_context, ContextEntry> contexts;
    std::atomic<std::uint64_t> released{0};

    // Unlinks `it` everywhere; appends its program to `out` (released by the
    // caller after unlocking).
    void unlink(Slots::iterator it, std::vector<ProgramRef>& out) {
        out.push_back(std::move(it->program));  // first: the only step that can throw
        if (auto per = signatures.find({it->context, it->device}); per != signatures.end()) {
            for (const auto& s : it->signatures) {
                per->second.erase(s);
            }
            if (per->second.empty()) {
                signatures.erase(per);
            }
        }
        if (auto c = contexts.find(it->context); c != contexts.end() && --c->second.programs == 0) {
            contexts.erase(c);
        }
        slots.erase({it->context, it->device, it->key});
        lru.erase(it);
        released++;
    }

    void drop_context(cl_context context, std::vector<ProgramRef>& out) {
        for (auto it = lru.begin(); it != lru.end();) {
            auto next = std::next(it);
            if (it->context == context) {
                unlink(it, out);
            }
            it = next;
        }
    }

    // The sweep and the bound (see program_cache.hpp).
    void sweep_and_trim(std::vector<ProgramRef>& out) {
        std::vector<cl_context> only_ours;
        for (const auto& [context, entry] : contexts) {
            if (entry.counts_programs && reference_count(context) <= entry.programs) {
                only_ours.push_back(context);
            }
        }
        for (auto c : only_ours) {
            drop_context(c, out);
        }
        while (lru.size() > max) {
            unlink(std::prev(lru.end()), out);
        }
    }
};

namespace {

void CL_CALLBACK on_context_destroyed(cl_context context, void* user_data) {
    auto* weak = static_cast<std::weak_ptr<ProgramCache::State>*>(user_data);
    if (auto state = weak->lock()) {
        std::vector<ProgramRef> dropped;
        {
            std::lock_guard g(state->mu);
            state->drop_context(context, dropped);
        }
    }
    delete weak;
}

}  // namespace

ProgramCache::ProgramCache(std::size_t max_programs)
    : state_(std::make_shared<State>(max_programs)) {}

ProgramCache::~ProgramCache() {
    // Release outside the lock and after the state is gone from the
    // callbacks' reach: releasing a context's last program may run them.
    std::vector<ProgramRef> dropped;
    {
        std::lock_guard g(state_->mu);
        for (auto& s : state_->lru) {
            dropped.push_back(std::move(s.program));
        }
    }
    state_.reset();
}

std::optional<std::pair<cl_program, store::Key>> ProgramCache::find_signature(
    cl_context context, cl_device_id device, const std::string& signature) {
    State& s = *state_;
    std::lock_guard g(s.mu);
    auto per = s.signatures.find({context, device});
    if (per == s.signatures.end()) {
        return std::nullopt;
    }
    auto it = per->second.find(signature);
    if (it == per->second.end()) {
        return std::nullopt;
    }
    Slots::iterator slot = it->second;
    s.lru.splice(s.lru.begin(), s.lru, slot);
    clRetainProgram(slot->program.get());  // the caller's own reference
    return std::make_pair(slot->program.get(), slot->key);
}

cl_program ProgramCache::find(cl_context context, cl_device_id device, const store::Key& key) {
    State& s = *state_;
    std::lock_guard g(s.mu);
    auto it = s.slots.find({context, device, key});
    if (it == s.slots.end()) {
        return nullptr;
    }
    s.lru.splice(s.lru.begin(), s.lru, it->second);
    clRetainProgram(it->second->program.get());
    return it->second->program.get();
}

cl_program ProgramCache::insert(cl_context context, cl_device_id device, const store::Key& key,
                                ProgramRef program) {
    const PlatformTraits traits = traits_of(context, device);
    State& s = *state_;
    std::vector<ProgramRef> dropped;  // released after the lock, before returning
    std::lock_guard g(s.mu);
    if (auto it = s.slots.find({context, device, key}); it != s.slots.end()) {
        s.lru.splice(s.lru.begin(), s.lru, it->second);  // another thread kept one first
        cl_program kept = it->second->program.get();
        clRetainProgram(kept);
        dropped.push_back(std::move(program));
        return kept;
    }
    cl_program answer = program.get();
    clRetainProgram(answer);  // the caller's own reference
    if (s.max == 0) {
        dropped.push_back(std::move(program));
        return answer;
    }
    auto [entry, first] = s.contexts.try_emplace(context);
    if (first) {
        entry->second.counts_programs = traits.counts_programs;
        if (traits.destructor_callback != nullptr) {
            auto* weak = new std::weak_ptr<State>(state_);
            if (traits.destructor_callback(context, on_context_destroyed, weak) != CL_SUCCESS) {
                delete weak;
            }
        }
    }
    entry->second.programs++;
    s.lru.push_front(Slot{context, device, key, std::move(program), {}});
    s.slots.emplace(std::make_tuple(context, device, key), s.lru.begin());
    s.sweep_and_trim(dropped);
    return answer;
}

void ProgramCache::remember(cl_context context, cl_device_id device, std::string signature,
                            const store::Key& key) {
    State& s = *state_;
    std::lock_guard g(s.mu);
    auto it = s.slots.find({context, device, key});
    if (it == s.slots.end()) {
        return;  // released meanwhile (bound, sweep or forget)
    }
    auto [pos, added] = s.signatures[{context, device}].try_emplace(signature, it->second);
    if (added) {
        it->second->signatures.push_back(std::move(signature));
    }
}

std::size_t ProgramCache::forget(cl_context context) noexcept {
    std::vector<ProgramRef> dropped;
    try {
        std::lock_guard g(state_->mu);
        state_->drop_context(context, dropped);
    } catch (...) {  // out of memory: what was unlinked so far is still released
    }
    return dropped.size();
}

std::size_t ProgramCache::size() const {
    std::lock_guard g(state_->mu);
    return state_->lru.size();
}

std::uint64_t ProgramCache::released() const {
    return state_->released;
}

}  // namespace kcache::service
