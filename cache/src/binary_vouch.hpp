#pragma once
// The load check of a binary this node did not compile itself (a pack's): it
// is loaded once in the kcache-verify helper (--check load) under a deadline
// before any load in the caller's process, so a binary that makes the driver
// abort (PoCL asserts on a truncated one) or hang costs the helper, never the
// application. A good verdict is kept by the bytes' key (device and driver
// included) and digest: for the process, and for the node as an empty file
// named by both under the store directory's vouched/ (0700, as the store);
// a bad one is recorded by the ladder as a rejected_binary failure.

#include <chrono>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "kcache/store/types.hpp"

namespace kcache::service {

// Deadline of one load check.
inline constexpr std::chrono::seconds kVouchTimeout{30};

// kcache-verify beside `jit_helper` (an install keeps both in
// libexec/kcache), else the one of the build tree.
std::string verify_helper_beside(const std::string& jit_helper);

// Loads `bytes` for the device of `fields` with `options` in `helper`;
// nullopt when it loaded, else why not (the driver refused it, it crashed or
// hung the helper, or the helper could not run: then nothing vouches for it).
// A good verdict already given to the same key and bytes in this process, or
// on this node (a file in `vouched_dir`; empty: none kept), is reused.
std::optional<std::string> vouch_for_binary(const std::string& helper,
                                            const std::filesystem::path& vouched_dir,
                                            const store::KeyFields& fields,
                                            std::span<const std::uint8_t> bytes,
                                            const std::string& options);

}  // namespace kcache::service
