#pragma once
// The files a driver's compiler consists of (docs/design.md, "Identity and
// the key"): the vendor library behind an OpenCL platform, the compiler
// libraries it links, and the data files its compiler reads at build time
// where they are known. Drivers such as Mesa rusticl and PoCL report one
// version whatever LLVM, clang or libclc they load; a digest of these files'
// stat() goes into the JIT key's compiler identity so that an update of any
// of them is a new compiler. Nothing here opens or reads a file, and nothing
// asks OpenCL: the library is found through the platform's ICD dispatch
// table and the dynamic loader's list of loaded objects, the files by stat().

#include "kcache/opencl.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kcache::device_db {

// Why a file counts: the vendor library itself, a compiler library it links,
// or a file its compiler reads.
enum class CompilerFileRole { icd, library, data };

// One file as stat() (following links) saw it.
struct CompilerFile {
    CompilerFileRole role = CompilerFileRole::data;
    std::string path;  // as the dynamic loader or the driver names it, not resolved
    bool present = false;
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    friend bool operator==(const CompilerFile&, const CompilerFile&) = default;
};

// The path of the vendor library that implements `platform`, as the dynamic
// loader names it (dladdr of the clGetPlatformInfo entry of the ICD dispatch
// table every platform object starts with); "" when it is not a loaded object.
std::string icd_library_path(cl_platform_id platform);

// The last component of `path` (all of it when it has no '/').
std::string_view path_file_name(std::string_view path);

// True when a library called `file_name` (no directory) is part of a
// compiler: LLVM (and SPIRV-LLVM-Translator's libLLVMSPIRVLib), clang, lld,
// SPIRV-Tools, Intel's IGC and its front end, AMD's comgr, NVIDIA's PTX
// compilers. The list is kCompilerLibraryPrefixes in compiler_files.cpp.
bool is_compiler_library(std::string_view file_name);

// The compiler libraries that `library` (loaded, and named as
// icd_library_path() names it) needs, directly or through the compiler
// libraries it needs (DT_NEEDED, read from the loaded images): what is in
// the process whenever the library is, in path order. A library it opens
// later with dlopen(), or one it needs only through a library that is no
// compiler library, is not among them. Empty when `library` is not loaded.
std::vector<std::string> linked_compiler_libraries(const std::string& library);

// The files that the compiler of the driver in `library` reads at build time
// and that kcache knows of (PoCL's kernel library and headers, rusticl's
// libclc, the IGC libraries Intel's driver opens when it compiles), found by
// their path alone (none is listed or opened); empty for other drivers.
std::vector<std::string> driver_data_files(const std::string& library);

// `library`, linked_compiler_libraries() and driver_data_files() of it, each
// stat()ed; empty when `library` is "".
std::vector<CompilerFile> compiler_files_of(const std::string& library);

// compiler_files_of(icd_library_path(platform)).
std::vector<CompilerFile> compiler_files(cl_platform_id platform);

// 16 hex digits over each file's role, path, presence, size and mtime (not
// its inode or ctime, which differ between machines that installed the same
// package); "" when `files` is empty.
std::string compiler_files_digest(const std::vector<CompilerFile>& files);

}  // namespace kcache::device_db
