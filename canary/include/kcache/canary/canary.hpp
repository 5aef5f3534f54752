#pragma once
// The driver canary (docs/design.md, "The driver canary"): before kcache
// serves a binary that a driver built for a registry kernel, the known-answer
// tests of the registry kernels run on that driver, in kcache-verify under the
// watchdog, on inputs drawn from a recorded seed. Verdicts are kept per
// driver identity (device + driver version + compiler identity) and kernel
// variant, in files under the user store's directory:
//
//   <store>/canary/<identity id>.json   (0700 directory, 0600 files; replaced
//                                        atomically by rename)
//   record   = { "format": 1, "identity": identity, "seed": uint32,
//                "run_at": unix seconds, "wall_ms": int, "verdicts": [verdict…] }
//   identity = { "vendor_id", "vendor", "device_id", "device", "platform",
//                "driver", "compiler" }
//   verdict  = { "variant": id, "state": "validated" | "suspect" | "not_run",
//                "check": what failed ("" when validated), "seed": uint32,
//                "max_error": number or null, "detail": text,
//                "differential": differential or null }   (absent: null)
//   differential = { "previous_driver": text, "result": "agree" | "both_right" |
//                "new_wrong" | "previous_wrong" | "both_wrong" | "not_loaded" |
//                "timeout" | "crashed",
//                "max_difference": number or null, "detail": text }
//
// Every field is checked on read; a damaged file is no verdict (the canary
// runs again and replaces it).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kcache/canary/error.hpp"
#include "kcache/common/result.hpp"
#include "kcache/device_db/identity.hpp"
#include "kcache/kernels/registry.hpp"

namespace kcache::store {
class Store;
}

namespace kcache::canary {

// What kcache keys a driver's binaries by, for one device.
struct DriverIdentity {
    std::uint32_t vendor_id = 0;
    std::string vendor;
    std::uint32_t device_id = 0;  // PCI device id where the driver reports one, else 0
    std::string device;           // device name
    std::string platform;
    std::string driver;    // driver version
    std::string compiler;  // the JIT key's compiler identity (device_db::jit_compiler_id)

    // 16 hex digits naming the identity (the record's file name).
    std::string id() const;
    // "pthread-haswell, driver 3.1 (Portable Computing Language)".
    std::string describe() const;
    friend bool operator==(const DriverIdentity&, const DriverIdentity&) = default;
};

// The identity of `device`'s driver, as the JIT key names it.
DriverIdentity driver_identity(const device_db::DeviceIdentity& device);

enum class VerdictState { validated, suspect, not_run };
// "validated", "suspect" or "not_run".
const char* to_string(VerdictState state) noexcept;

// The differential check of a variant: the binary an earlier driver built
// for it on the same device, loaded on this driver and run on the same
// inputs; the two outputs compared within the kernel's tolerance and the CPU
// reference deciding which one is wrong (result: see the grammar above).
struct Differential {
    std::string previous_driver;
    std::string result;
    std::optional<double> max_difference;  // largest |new - previous|
    std::string detail;
    friend bool operator==(const Differential&, const Differential&) = default;
};

// One kernel variant's verdict on one driver.
struct Verdict {
    std::string variant;  // registry variant id
    VerdictState state = VerdictState::not_run;
    // Suspect: the failing check (the KAT's check name, "build", "load",
    // "timeout" or "crashed"); not run: why ("unsupported", "no_device",
    // "error").
    std::string check;
    std::uint32_t seed = 0;
    std::optional<double> max_error;  // the largest error the KAT saw
    std::string detail;
    std::optional<Differential> differential;  // none: no earlier binary was checked
};

struct Record {
    DriverIdentity identity;
    std::uint32_t seed = 0;
    std::int64_t run_at = 0;  // unix seconds
    std::int64_t wall_ms = 0;
    std::vector<Verdict> verdicts;

    // True when some verdict is suspect.
    bool suspect() const;
};

// The verdict that covers `variant` in `record`: its own, else (a variant the
// canary did not run) the worst (suspect before validated) of the verdicts of
// its kernel on the same precision path (kernels::precision_path) and, where
// it has an activation, of those with the same activation; nullptr when the
// canary tested no variant of its precision path: no other element type's
// test stands for it.
const Verdict* verdict_for(const Record& record, const kernels::Variant& variant);

// <store_dir>/canary.
std::filesystem::path canary_dir(const std::filesystem::path& store_dir);

// The record of `identity` in `dir`; nullopt when there is none or it is
// damaged or of another identity (error: only when the directory cannot be read).
std::optional<Record> load_record(const std::filesystem::path& dir, const DriverIdentity& identity);
// The same, for `identity` whose id() is `identity_id` (made once by the caller).
std::optional<Record> load_record(const std::filesystem::path& dir, const DriverIdentity& identity,
                                  const std::string& identity_id);
// Every sound record of `dir` (none when it does not exist).
std::vector<Record> load_records(const std::filesystem::path& dir);
// Writes `record` (replacing the identity's earlier one); error: why not.
Status<std::string> save_record(const std::filesystem::path& dir, const Record& record);

// The record as JSON text (the file's form) and back; parse errors name the field.
std::string to_json(const Record& record);
Result<Record, CanaryError> record_from_json(const std::string& text);

// The default set on `device`: for every registry kernel with a known-answer
// test, one variant of each precision path the device supports (the default
// variant's first), their activations spread so that each value runs at
// least once where the paths allow it.
std::vector<kernels::Variant> default_set(const device_db::DeviceIdentity& device);

// How the canary's helpers compete for the processor: as the caller does, or
// below it (nice 10: a canary nobody waits for yields to the work that is).
enum class Priority { normal, background };

// How the canary runs.
struct RunOptions {
    std::string helper;                         // kcache-verify
    std::uint32_t seed = 0;                     // inputs' seed (recorded)
    std::chrono::milliseconds timeout{20'000};  // bound on one variant (build, load, KAT)
    unsigned parallel = 0;                      // helpers at once; 0: the cores, at most 4
    Priority priority = Priority::normal;
};

// The binary an earlier driver identity built for a variant on the same device.
struct PreviousBinary {
    // Its driver version; with ", compiler files <16 hex digits>" when that
    // is the running driver's version (an update of the compiler's files
    // alone), or ", compiler <its compiler identity>" when that names no files.
    std::string driver;
    std::vector<std::uint8_t> bytes;
};
// Earlier drivers' binaries by variant id.
using PreviousBinaries = std::map<std::string, PreviousBinary>;

// For each of `variants`, the newest binary in `store` that another driver
// identity built for it on `device` (a JIT entry of the same variant, source
// and device, and another driver version or compiler identity: an update of
// libclc or LLVM alone counts), preferring an identity whose stored verdict
// (records in `dir`) validated the variant. Variants without one are left
// out; a store that cannot be read gives none.
PreviousBinaries previous_binaries(store::Store& store, const device_db::DeviceIdentity& device,
                                   const std::vector<kernels::Variant>& variants,
                                   const std::filesystem::path& dir);

// Runs the canary of `variants` on `device` (`options.parallel` kcache-verify
// at once, each running its share of the variants one after another and
// killed when one variant takes longer than `options.timeout`): a KAT that
// fails is suspect with its failing check, one that hangs is suspect
// "timeout", one that crashes the helper suspect "crashed" (the variants
// after it run again in a fresh helper); a helper that could not run gives
// not_run. A variant with a binary in `previous` also gets the differential
// check.
Record run_canary(const device_db::DeviceIdentity& device,
                  const std::vector<kernels::Variant>& variants, const RunOptions& options,
                  const PreviousBinaries& previous = {});

// A caller's own known-answer test of a kernel built from its source: the
// KAT file `kat_file` (inputs, expected outputs, tolerance; the grammar is in
// kernels_cl/src/verify_kat.hpp) run by kcache-verify --kat on `binary`,
// built with `build_options` for `device`, under `options.timeout`. The
// verdict's variant is `name`: validated; suspect with its check ("result":
// an output outside the tolerance or an OpenCL step that failed, "timeout",
// "crashed"); not_run when the KAT file is unusable ("kat_file") or the
// helper could not run.
Verdict run_caller_kat(const device_db::DeviceIdentity& device, const std::string& name,
                       const std::filesystem::path& kat_file,
                       const std::vector<std::uint8_t>& binary, const std::string& build_options,
                       const RunOptions& options);

// A seed from the system's entropy source.
std::uint32_t fresh_seed();

}  // namespace kcache::canary
