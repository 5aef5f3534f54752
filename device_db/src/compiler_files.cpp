// The files of a driver's compiler (compiler_files.hpp): the vendor library,
// the compiler libraries it links (loaded_objects.cpp), and the files its
// compiler reads at build time, from a table of the drivers kcache knows,
// found where each driver looks for them (what strace shows a compile of
// each reading). Every file is stat()ed, never opened.
#include "kcache/device_db/compiler_files.hpp"

#include <string_view>

#include "kcache/common/file_stamp.hpp"
#include "kcache/common/hex.hpp"
#include "kcache/common/sha256.hpp"

namespace kcache::device_db {
namespace {

// The headers PoCL's front end includes in every build, under
// <datadir>/include.
constexpr std::string_view kPoclHeaders[] = {
    "_builtin_renames.h",
    "_clang_opencl.h",
    "_enable_all_exts.h",
    "_kernel.h",
    "_libclang_versions_checks.h",
    "opencl-c-base.h",
    "opencl-c.h",
    "pocl_image_types.h",
    "pocl_types.h",
};

// PoCL's kernel library (the built-in functions as LLVM bitcode, linked
// into every kernel) for the host: one file per instruction-set variant, of
// which PoCL picks the host CPU's; all are stat()ed, the choice being PoCL's.
#if defined(__x86_64__) && defined(__linux__)
constexpr std::string_view kPoclKernelTriple = "x86_64-pc-linux-gnu";
constexpr std::string_view kPoclKernelVariants[] = {
    "GENERIC", "sse2", "ssse3", "sse41", "avx", "avx_f16c", "avx_fma4", "avx2", "avx512",
};
#else
constexpr std::string_view kPoclKernelTriple = "";
constexpr std::string_view kPoclKernelVariants[] = {""};
#endif

// libclc as Mesa's rusticl reads it: SPIR-V for 64- and 32-bit devices, at
// the path Mesa was built with (Debian's, and most distributions').
constexpr std::string_view kRusticlLibclc[] = {
    "/usr/lib/clc/spirv64-mesa3d-.spv",
    "/usr/lib/clc/spirv-mesa3d-.spv",
};

// What Intel's driver opens with dlopen() when it first compiles (so they
// are not among the libraries it links), found by the loader's search: on
// Debian and Intel's packages, in the directory above the driver's.
constexpr std::string_view kIntelCompilerLibraries[] = {"libigc.so.1", "libigdfcl.so.1"};

// The directory part of `path` ("." for none).
std::string_view dir_of(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? std::string_view(".") : path.substr(0, slash);
}

// A multiarch library directory (".../lib/x86_64-linux-gnu") sits one
// level deeper below the prefix than ".../lib".
bool multiarch(std::string_view libdir) {
    return path_file_name(libdir).find("-linux-") != std::string_view::npos;
}

// PoCL finds its data relative to its own library (a relocatable build, as
// Debian's is: "RELOC" in its platform version): <libdir>/../../share/pocl
// below a multiarch directory, <libdir>/../share/pocl otherwise. The path
// is kept as PoCL forms it, ".." and all.
void pocl_files(std::string_view libdir, std::vector<std::string>& out) {
    const std::string data =
        std::string(libdir) + (multiarch(libdir) ? "/../../share/pocl" : "/../share/pocl");
    for (std::string_view header : kPoclHeaders) {
        out.push_back(data + "/include/" + std::string(header));
    }
    if (kPoclKernelTriple.empty()) {
        return;
    }
    for (std::string_view variant : kPoclKernelVariants) {
        out.push_back(data + "/kernel-" + std::string(kPoclKernelTriple) + "-" +
                      std::string(variant) + ".bc");
    }
}

}  // namespace

std::string_view path_file_name(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::vector<std::string> driver_data_files(const std::string& library) {
    std::vector<std::string> out;
    const std::string_view name = path_file_name(library);
    const std::string_view libdir = dir_of(library);
    if (name.starts_with("libpocl")) {
        pocl_files(libdir, out);
    } else if (name.starts_with("libRusticlOpenCL")) {
        out.assign(std::begin(kRusticlLibclc), std::end(kRusticlLibclc));
    } else if (name.starts_with("libigdrcl")) {
        for (std::string_view lib : kIntelCompilerLibraries) {
            out.push_back(std::string(libdir) + "/../" + std::string(lib));
        }
    }
    return out;
}

std::vector<CompilerFile> compiler_files_of(const std::string& library) {
    std::vector<CompilerFile> files;
    if (library.empty()) {
        return files;
    }
    const auto add = [&files](CompilerFileRole role, const std::string& path) {
        const FileStamp s = stamp_of(path);
        files.push_back({role, path, s.exists, static_cast<std::uint64_t>(s.size), s.mtime_ns});
    };
    add(CompilerFileRole::icd, library);
    for (const std::string& lib : linked_compiler_libraries(library)) {
        add(CompilerFileRole::library, lib);
    }
    for (const std::string& data : driver_data_files(library)) {
        add(CompilerFileRole::data, data);
    }
    return files;
}

std::vector<CompilerFile> compiler_files(cl_platform_id platform) {
    return compiler_files_of(icd_library_path(platform));
}

std::string compiler_files_digest(const std::vector<CompilerFile>& files) {
    if (files.empty()) {
        return {};
    }
    Sha256 h;
    for (const CompilerFile& f : files) {
        // role path NUL present size mtime_ns LF: the path cannot hold a NUL.
        const std::string line = std::to_string(static_cast<int>(f.role)) + " " + f.path + '\0' +
                                 (f.present ? "1 " : "0 ") + std::to_string(f.size) + " " +
                                 std::to_string(f.mtime_ns) + "\n";
        h.update(line);
    }
    const Sha256Digest d = h.finish();
    return to_hex(d.data(), 8);
}

}  // namespace kcache::device_db
