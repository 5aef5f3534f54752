// Hot copies: the fuzzed bytes become the hot copy of one key in a store
// directory that an earlier writable open stamped; a deferred open then
// answers get_hot() from it, without SQLite. Seeds: a copy the store wrote,
// cut and flipped (README.md).
//
// Invariants: nothing crashes, throws or hangs; a copy is accepted only with
// the bytes its header and key record frame, never anything else.

#include <sys/stat.h>

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

// The store directory, its database stamped once per process, and the path
// of the probe key's hot copy.
const fs::path& copy_path() {
    static const fs::path path = [] {
        const fs::path dir = kcache::fuzz::scratch_dir() / "hot-store";
        fs::remove_all(dir);
        (void)Store::open(dir);  // creates the store file and stamps it
        struct stat st {};
        ::stat((dir / kStoreFileName).c_str(), &st);
        return dir / "hot" / std::to_string(static_cast<unsigned long long>(st.st_ino)) /
               make_key(probe_fields()).hex();
    }();
    return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    kcache::fuzz::silence_log();
    const fs::path& copy = copy_path();
    kcache::fuzz::write_file(copy, {reinterpret_cast<const char*>(data), size});
    Policy policy;
    policy.defer_open = true;
    auto store = Store::open(copy.parent_path().parent_path().parent_path(), policy);
    check(store.ok(), "a stamped store did not open");
    if (auto got = store->get_hot(probe_fields())) {
        // Header 72 bytes (with the tag), then the key record, then exactly the bytes.
        check(size >= 72 + got->size(), "an accepted copy is shorter than its bytes");
        check(std::equal(got->begin(), got->end(), data + (size - got->size())),
              "an accepted copy's bytes are not the file's tail");
    }
    return 0;
}
