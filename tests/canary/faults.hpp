#pragma once
// The faults the canary tests inject through the test layer (fault_layer.cpp):
// what a broken driver update does to the registry kernels, each with the
// variant whose known-answer test must catch it.

#include <string>
#include <vector>

namespace kcache::test {

struct Fault {
    std::string name;
    std::string variant;           // the variant the canary runs
    std::vector<std::string> env;  // the layer's settings, "NAME=value"
};

// Miscompiled source: occurrence `nth` of `from` becomes `to` in programs whose
// source contains `match`.
Fault source_fault(const std::string& variant, const std::string& match, const std::string& from,
                   const std::string& to, int nth = 1);

// Every wrong-answer fault: altered operators and constants, a variant swapped
// (build options of another variant), a corrupted binary. Hangs and crashes are
// separate (they cost a deadline each).
std::vector<Fault> wrong_answer_faults();

// A kernel that hangs, or crashes the process, when enqueued: one per kernel.
std::vector<Fault> hang_faults();
std::vector<Fault> crash_faults();

}  // namespace kcache::test
