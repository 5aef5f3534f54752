#pragma once
// The check of a binary this node did not compile itself (a pack's, a remote
// object, an imported entry, a pulled one): before any load in the caller's
// process it is loaded in the kcache-verify helper under a deadline, and for
// a registry kernel built from the registry's source its known-answer test
// runs there too (--variant ID); any other binary is only loaded (--check
// load). So a binary that makes the driver abort (PoCL asserts on a truncated
// one) or hang costs the helper, and another variant's binary that loads
// fine but computes wrong numbers is refused, never served. A good verdict
// is kept by the check, the bytes' key (device and driver included) and
// digest: for the process, and for the node as an empty file under the
// store directory's vouched/ (0700, as the store), named
// `<key hex>.<digest of check and bytes>` so that `kcache gc` can drop the
// verdicts of keys no longer stored.

#include <chrono>
#include <filesystem>
#include <optional>
#include <set>
#include <span>
#include <string>

#include "kcache/canary/error.hpp"
#include "kcache/common/result.hpp"
#include "kcache/kernels/registry.hpp"
#include "kcache/store/key.hpp"
#include "kcache/store/pack.hpp"
#include "kcache/store/types.hpp"

namespace kcache::service {

// Deadline of one check (a load takes milliseconds, a known-answer test on
// PoCL a few hundred).
inline constexpr std::chrono::seconds kVouchTimeout{30};

// kcache-verify beside `jit_helper` (an install keeps both in
// libexec/kcache), else the one of the build tree.
std::string verify_helper_beside(const std::string& jit_helper);

// The registry variant whose known-answer test checks a binary stored under
// `fields`: a registry kernel with a test, built from the very source this
// kcache's registry renders for it; else why there is none, for people (an
// operator library's own kernel, another kcache version's source).
Result<kernels::Variant, canary::CanaryError> kat_variant_or_why(const store::KeyFields& fields);

// kat_variant_or_why() without the reason: nullopt when there is no test.
std::optional<kernels::Variant> kat_variant_of(const store::KeyFields& fields);

// Whether `entry` of `tier` must be vouched for before this process loads
// it: a pack's binary, or a user-store entry imported from a pack and not
// verified on its device since (the user store trusts what this node built,
// promoted or stored after its own check, where the node recorded that:
// stored_here).
bool built_elsewhere(const store::Tier& tier, const store::EntryInfo& entry);

// Whether the node recorded (record_stored_here) that kcache itself put the
// user-store entry under `key`: a JIT or promoted binary of this driver, or
// one stored or loaded after its check. `dir`: the store's vouched/. An
// entry without the record (one an older kcache stored, or any other writer
// of the store) is checked like a binary built elsewhere before this
// process loads it: a driver that aborts on a binary it did not make
// (rusticl) costs the helper, not the caller.
bool stored_here(const std::filesystem::path& dir, const store::Key& key);

// Records in `dir` (the store's vouched/, made when missing) that kcache put
// or checked the user-store entry under `key`; false when it could not (a
// read-only store: the entry is checked again by the next process).
bool record_stored_here(const std::filesystem::path& dir, const store::Key& key);

// Checks `bytes` for the device of `fields` with `options` in `helper`:
// the known-answer test of kat_variant_of(fields), else a load. Returns
// nullopt when it passed, else why not (the driver refused the binary, the
// test computed wrong numbers, it crashed or hung the helper, or the helper
// could not run: then nothing vouches for it). A good verdict already given
// to the same check of the same key and bytes in this process, or on this
// node (a file in `vouched_dir`; empty: none kept), is reused.
std::optional<std::string> vouch_for_binary(const std::string& helper,
                                            const std::filesystem::path& vouched_dir,
                                            const store::KeyFields& fields,
                                            std::span<const std::uint8_t> bytes,
                                            const std::string& options);

// Removes the node's verdicts in `vouched_dir` whose key is not in
// `live_keys` (key hex: the entries a check may still be asked for, the
// user store's and the runtime packs'), so verdicts of entries gone (among
// them those of a driver replaced since: the key names it) do not pile up;
// returns how many went. Files not named as verdicts are left alone.
std::size_t drop_stale_verdicts(const std::filesystem::path& vouched_dir,
                                const std::set<std::string>& live_keys);

}  // namespace kcache::service
