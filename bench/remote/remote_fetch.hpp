#pragma once
// The remote benchmark's storage-level section: a remote hit without OpenCL.

#include <vector>

#include "remote_backends.hpp"

namespace kcache::bench {

// Per backend: one remote::Client::fetch (GET, envelope, signature and
// checksum checks) against one store::Store::get (SQLite, checksum) of the
// same 48 KiB entries, both in one warm process; medians of `reps` rounds.
void storage_level(const std::vector<Remote>& remotes, int reps);

}  // namespace kcache::bench
