#pragma once
// Sample store keys and provenance for tests and benchmarks alike (no
// GoogleTest here): entries as a real device's JIT would write them.

#include "kcache/store/key.hpp"
#include "kcache/store/types.hpp"

namespace kcache::test {

// Deterministic, distinct key fields for index `i`: a kernel of a real
// device (an Intel Arc GPU) with every identity field set.
store::KeyFields sample_fields(int i);

// A provenance as a JIT would write it.
store::Provenance test_provenance();

}  // namespace kcache::test
