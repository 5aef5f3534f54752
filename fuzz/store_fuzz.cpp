// Store files: the fuzzed bytes become `store.sqlite` of a fresh store
// directory, which is then opened as the user store (damaged files are moved
// aside, older schemas migrated, newer ones refused) and used the way the
// service and the CLI use it: list, look up, explain, put, record failures,
// collect garbage, export, flush. Seeds are small real stores (README.md).
//
// Invariants: nothing crashes, throws or hangs; an entry read back has the
// bytes that were put; a verified entry has the size its row declares.

#include <vector>

#include "fuzz_support.hpp"
#include "kcache/store/store.hpp"
#include "key_fields.hpp"
#include "quiet_log.hpp"

namespace {

using namespace kcache::store;
using kcache::fuzz::check;
using kcache::fuzz::probe_fields;
namespace fs = std::filesystem;

void read_all(Store& store) {
    auto listed = store.list();
    if (!listed) {
        return;
    }
    for (const EntryInfo& info : *listed) {
        auto hit = store.get(info.fields);
        if (hit) {
            check(hit->bytes.size() == hit->info.raw_size, "a verified entry's size differs");
        }
        (void)store.get(info.key);
        (void)store.info(info.key);
        (void)store.find_fresh_failure(info.key);
    }
    (void)store.nearest(probe_fields(), 3);
    (void)store.stats();
}

void write_some(Store& store, const fs::path& dir) {
    const KeyFields fields = probe_fields();
    const std::vector<std::uint8_t> bytes(300, 0x5a);
    auto put = store.put(fields, bytes, Provenance{"fuzz", Origin::jit, 1, "log"});
    if (put) {
        auto back = store.get(fields);
        check(!back.ok() || back->bytes == bytes, "an entry read back differs from what was put");
        (void)store.set_verified(put->key, Verification::passed);
        (void)store.record_failure(put->key, FailureKind::timeout, "fuzz");
        (void)store.clear_failures(put->key);
    }
    (void)store.export_pack(dir / "out.kcpack");
    (void)store.gc(GcOptions{1000, 1u << 20});
    (void)store.flush();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    kcache::fuzz::silence_log();
    const fs::path dir = kcache::fuzz::scratch_dir() / "store";
    fs::remove_all(dir);
    fs::create_directory(dir);
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
    kcache::fuzz::write_file(dir / kStoreFileName, {reinterpret_cast<const char*>(data), size});
    Policy policy;
    policy.busy_retries = 0;
    policy.busy_timeout_ms = 0;
    policy.clock = [] { return TimeMs{1'800'000'000'000}; };
    auto store = Store::open(dir, policy);
    if (!store) {
        check(!store.error().message.empty(), "a refused store has no message");
        return 0;
    }
    read_all(*store);
    write_some(*store, dir);
    return 0;
}
