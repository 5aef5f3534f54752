// Pack files: the fuzzed bytes are written to a file and opened as a pack
// (the system tier, or a file given to `kcache import` / `ls --pack`), then
// everything a reader does with a pack is done: list, look up each listed
// entry by key and by fields, walk the verified entries, import into a user
// store. Seeds are small real packs (see README.md in this folder).
//
// Invariants: nothing crashes, throws or hangs; a verified entry's bytes have
// the size its row declares; an entry found by its fields is stored under
// the key of those fields.

#include <optional>

#include "fuzz_support.hpp"
#include "kcache/store/pack.hpp"
#include "kcache/store/store.hpp"
#include "quiet_log.hpp"

namespace {

using namespace kcache::store;
using kcache::fuzz::check;
namespace fs = std::filesystem;

void read_pack(Pack& pack) {
    auto listed = pack.list();
    if (!listed) {
        check(!listed.error().message.empty(), "a failed pack listing has no message");
        return;
    }
    for (const EntryInfo& info : *listed) {
        (void)pack.get(info.key);
        auto by_fields = pack.get(info.fields);
        if (by_fields) {
            check(by_fields->bytes.size() == by_fields->info.raw_size,
                  "a verified pack entry's size differs from its row");
            check(make_key(by_fields->info.fields) == make_key(info.fields),
                  "a pack entry found by fields carries other fields");
        }
    }
    auto walked = pack.for_each_verified([](Entry&& e) {
        check(e.bytes.size() == e.info.raw_size, "a verified pack entry's size differs");
    });
    (void)walked;
    (void)pack.stats();
    (void)pack.aot_coverage();
}

// A user store to import into, emptied now and then so it stays small.
Store& import_target() {
    static std::optional<Store> store;
    static int uses = 0;
    const fs::path dir = kcache::fuzz::scratch_dir() / "store";
    if (!store || ++uses % 64 == 0) {
        store.reset();
        fs::remove_all(dir);
        Policy policy;
        policy.busy_retries = 0;
        auto opened = Store::open(dir, policy);
        check(opened.ok(), "cannot open the import target store");
        store.emplace(std::move(opened).value());
    }
    return *store;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    kcache::fuzz::silence_log();
    const fs::path path = kcache::fuzz::scratch_dir() / "fuzz.kcpack";
    kcache::fuzz::write_file(path, {reinterpret_cast<const char*>(data), size});
    auto pack = Pack::open(path);
    if (!pack) {
        check(!pack.error().message.empty(), "a refused pack has no message");
    } else {
        read_pack(*pack);
    }
    auto imported = import_target().import_pack(path);
    check(imported.ok() || !pack.ok() || !imported.error().message.empty(),
          "a failed import has no message");
    return 0;
}
