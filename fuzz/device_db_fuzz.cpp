// The device database and its quirk rules: the fuzzed bytes are a data file
// (the format of devices.json / quirks.json, and of $KCACHE_DEVICE_DB
// overrides). It is parsed, layered over the built-in data, and then every
// device it names is matched and its quirks decided, with a driver version
// taken from the file's own rules so that version ranges are exercised.
//
// Invariants: nothing crashes, throws or hangs; errors say "file:line:";
// a device a layer names by PCI id matches at least at that level; the
// JIT timeout of the last matching rule that sets one is the one decided.

#include "fuzz_support.hpp"
#include "kcache/device_db/database.hpp"
#include "kcache/device_db/loader.hpp"

namespace {

using namespace kcache::device_db;
using kcache::fuzz::check;

const DeviceDb& builtin_db() {
    static const DeviceDb db = [] {
        auto built = DeviceDb::builtin();
        check(built.ok(), "the built-in device data does not load");
        return std::move(built).value();
    }();
    return db;
}

// Identities for every device record of `file`, each with each rule's driver bounds.
std::vector<DeviceIdentity> identities(const DataFile& file) {
    std::vector<std::string> drivers = {"", "1.0", "99999.1"};
    for (const QuirkRule& q : file.quirks) {
        if (q.driver && q.driver->min) {
            drivers.push_back(q.driver->min->to_string());
        }
        if (q.driver && q.driver->max) {
            drivers.push_back(q.driver->max->to_string() + "+build");
        }
    }
    std::vector<DeviceIdentity> out;
    for (const DeviceRecord& d : file.devices) {
        for (const std::string& driver : drivers) {
            DeviceIdentity id;
            id.vendor_id = d.vendor_id;
            id.type = DeviceType::gpu;
            id.name = d.name;
            if (d.pci_id != 0) {
                id.pci_device_id = d.pci_id;
            }
            id.driver_version = driver;
            out.push_back(std::move(id));
        }
    }
    return out;
}

void decide(const DeviceDb& db, const DataFile& file) {
    for (const DeviceIdentity& id : identities(file)) {
        const DeviceMatch m = db.match(id);
        if (id.pci_device_id && id.name.empty()) {
            check(m.level == MatchLevel::pci_id || m.level == MatchLevel::name,
                  "a device the layer names by PCI id does not match by it");
        }
        const QuirkDecision q = db.quirks_for(id);
        std::optional<std::uint32_t> last;
        for (const QuirkRule* rule : q.rules) {
            last = rule->jit_timeout_ms ? rule->jit_timeout_ms : last;
        }
        check(q.jit_timeout_ms == last, "the decided JIT timeout is not the last matching rule's");
        if (id.pci_device_id) {
            (void)db.match(id.vendor_id, *id.pci_device_id);
        }
    }
    (void)db.aot_families();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    auto file = parse_data_file(text, "fuzz.json");
    if (!file) {
        check(file.error().message.rfind("fuzz.json:", 0) == 0,
              "a data file error does not start with file:line: " + file.error().message);
        return 0;
    }
    DeviceDb layered = builtin_db();
    if (layered.add_layer(*file).ok()) {
        decide(layered, *file);
    }
    auto alone = DeviceDb::from_files({*file});
    if (alone) {
        decide(*alone, *file);
    }
    return 0;
}
