#include "seeded.hpp"

#include "kcache/store/store.hpp"

namespace kcache::bench {

device_db::CompileInput input_of(const std::string& kernel) {
    const auto& r = rendered(kernel);
    return {r.variant.id(), r.source, r.options, r.entry_points};
}

const device_db::DeviceIdentity& identity() {
    static const device_db::DeviceIdentity id = [] {
        auto p = device_db::probe(pocl_device());
        if (!p) {
            die("device_db::probe failed: " + p.error().message);
        }
        return *p;
    }();
    return id;
}

const Seeded& seeded() {
    static const Seeded s = [] {
        Seeded out{fresh_dir("seeded-store"), {}};
        auto cache = open_cache(out.dir);
        Context ctx = new_context();
        for (const auto& k : kernel_names()) {
            require_rung(request(*cache, ctx.get(), k), Rung::jit, "seeding the store");
        }
        auto store = store::Store::open(out.dir);
        if (!store) {
            die("cannot open the seeded store: " + store.error().message);
        }
        for (const auto& k : kernel_names()) {
            auto e = store->get(device_db::jit_key_fields(identity(), input_of(k)));
            if (!e) {
                die("seeded entry missing for " + k + ": " + e.error().detail);
            }
            out.bytes[k] = std::move(e->bytes);
        }
        return out;
    }();
    return s;
}

}  // namespace kcache::bench
