#pragma once
// Sanity checks for device binaries before anyone stores or loads them:
// a structurally sound ELF with a device code section, or an ocloc fat
// binary (an ar archive of such ELFs). Checks only; nothing is executed.

#include <cstddef>
#include <string>
#include <string_view>

#include "kcache/common/result.hpp"
#include "kcache/compiler/error.hpp"

namespace kcache::compiler {

// Returns the names of the ELF's sections joined by ';' when `bytes` is a
// 64-bit little-endian ELF whose section table lies inside the file and which
// holds a device binary section (NEO's "Intel(R) OpenCL Device Binary" or a
// zebin ".text.<kernel>"); else an error naming the first failed check.
Result<std::string, CompilerError> check_device_elf(std::string_view bytes);

// Returns the number of device ELFs in an ar archive (ocloc's fat binary)
// when every member other than "pad_*" passes check_device_elf and there is
// at least one; else an error naming the member.
Result<std::size_t, CompilerError> check_fat_binary(std::string_view bytes);

// True when `bytes` starts with the SPIR-V magic number (little-endian).
bool looks_like_spirv(std::string_view bytes);

}  // namespace kcache::compiler
