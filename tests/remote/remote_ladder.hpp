#pragma once
// What the remote ladder's tests share (ladder_test.cpp,
// ladder_forged_test.cpp): the fixture and the remote settings of a node.

#include <string>

#include "cache_fixture.hpp"

namespace kcache::test {

using RemoteLadder = CacheTest;

// The detail of `o`'s miss at `rung`; empty when it has none there.
std::string miss_of(const Outcome& o, Rung rung);

// `c` with the remote at `url` (timeout 2 s): every node signs with and
// trusts the test key (written beside `c.dir`).
Config remote_config(Config c, const std::string& url);

}  // namespace kcache::test
