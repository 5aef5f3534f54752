#pragma once
// The remote benchmark's storage-level sections: a remote hit without
// OpenCL, and batches of requests.

#include <vector>

#include "remote_backends.hpp"

namespace kcache::bench {

// Per backend: one remote::Client::fetch (GET, envelope, signature and
// checksum checks) against one store::Store::get (SQLite, checksum) of the
// same 48 KiB entries, both in one warm process; medians of `reps` rounds.
void storage_level(const std::vector<Remote>& remotes, int reps);

// Per backend: what kcache push and pull send for 32 entries of 48 KiB,
// as batches (Client::upload_many, fetch_many: Redis pipelines them) and
// one request at a time; medians per object of `reps` rounds.
void batches(const std::vector<Remote>& remotes, int reps);

}  // namespace kcache::bench
