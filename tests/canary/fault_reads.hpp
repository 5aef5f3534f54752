#pragma once
// Faults at execution time for the test layer (fault_layer.cpp): what a
// driver whose code generation is wrong hands back when the program's
// results are read. The compile is untouched. Chosen by the environment:
//
//   KCACHE_FAULT_READ=KIND          how the bytes read back are altered:
//     zero       every byte zeroed
//     flip97     a high bit of every 97th element flipped
//     scale      every element times 1.001, or by 8 ulps of its type where
//                that is more (f16, bf16); int8: plus 1
//     tail16     the last sixteenth of the elements zeroed
//     nan1       one element (two thirds in) made NaN (int8: plus 64)
//     one        one element (two thirds in) moved away from zero by 1/64
//                of its value and at least 16 ulps (int8: plus 1)
//     swap       two distinct elements (second and second to last) swapped
//     ulp+1, ulp-2, ulp~2   benign: every element one ulp away from zero,
//                two toward it, or two either way by turns (floats only)
//   KCACHE_FAULT_READ_TYPE=T        the elements: f32 (default), f16, bf16, i8
//   KCACHE_FAULT_READ_MIN_BYTES=N   only reads of at least N bytes (a fault
//                                   that shows on real-sized outputs only)
//
// Only blocking reads after a kernel ran (of a program KCACHE_FAULT_MATCH
// chose, when it is set; the canary runs a program loaded from a binary,
// which has no source to match, so its tests leave it unset).

#include <cstddef>
#include <string>

namespace kcache::test {

// Alters `size` bytes at `data` as `kind` says for elements of `type`;
// false when `kind` or `type` is not one of the above.
bool alter_read(const std::string& kind, const std::string& type, unsigned char* data,
                std::size_t size);

}  // namespace kcache::test
