#pragma once
// What layer_probe's files share (layer_probe.cpp, layer_probe_il.cpp): the
// context main() opened, the `name=value` lines, and the answers of a
// program and its kernels the modes print.

#include <string>

#include "kcache/opencl.h"

namespace probe {

// The probe's program: `scale` multiplies by the macro VAL, `shift` adds
// its argument (the tests compile it to SPIR-V for `il-run`).
inline constexpr const char* kSource =
    "kernel void scale(global float* a) { a[get_global_id(0)] *= VAL; }\n"
    "kernel void shift(global float* a, float b) { a[get_global_id(0)] += b; }\n";

extern cl_context g_context;  // of every device of the first platform

void put(const std::string& name, const std::string& value);
void put(const std::string& name, long long value);

// Every answer of the program `p` of kSource (its `scale` multiplying by
// 3 once built with `options`), under names that start with `prefix`: its
// queries before and after the build, the build and its callback, a run of
// `scale`, then its kernels and their queries, a rebuild while they hold it,
// its references and release callback, to its end.
void build_and_run(const std::string& prefix, cl_program p, const char* options);

// The modes of layer_probe_il.cpp.
int from_il();
int il_run(const std::string& path);

}  // namespace probe
