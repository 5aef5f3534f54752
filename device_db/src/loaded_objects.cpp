// Which loaded objects make up a driver's compiler, from what the dynamic
// loader holds in memory: dladdr() names the object an address is in,
// dl_iterate_phdr() lists the loaded objects with their program headers, and
// each object's dynamic section names what it needs. No file is opened and
// no system call made.
#include <dlfcn.h>
#include <link.h>

#include <CL/cl_icd.h>

#include <algorithm>

#include "kcache/device_db/compiler_files.hpp"

namespace kcache::device_db {
namespace {

// File names that start with one of these are compiler libraries (the one
// list: docs/design.md, "The driver's compiler files", says it in words).
// LLVM (and SPIRV-LLVM-Translator's libLLVMSPIRVLib), clang, lld,
// SPIRV-Tools; Intel's IGC, its OpenCL C front end and the clang it wraps;
// AMD's code object manager (ROCm); NVIDIA's PTX compilers.
constexpr std::string_view kCompilerLibraryPrefixes[] = {
    "libLLVM",      "libclang",           "liblld",           "libSPIRV",
    "libigc",       "libigdfcl",          "libopencl-clang",  "libopencl_clang",
    "libamd_comgr", "libnvidia-compiler", "libnvptxcompiler", "libnvidia-ptxjitcompiler",
};

// One loaded object as dl_iterate_phdr() gives it.
struct LoadedObject {
    std::string_view name;  // the loader's own string; "" for the main program and the vDSO
    ElfW(Addr) base = 0;
    const ElfW(Phdr) * phdr = nullptr;
    ElfW(Half) phnum = 0;
};

int collect(dl_phdr_info* info, std::size_t, void* out) {
    static_cast<std::vector<LoadedObject>*>(out)->push_back(
        {info->dlpi_name != nullptr ? std::string_view(info->dlpi_name) : std::string_view(),
         info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum});
    return 0;
}

// The DT_NEEDED names of `object`, read from its dynamic section in memory.
std::vector<std::string_view> needed_by(const LoadedObject& object) {
    const ElfW(Dyn)* dynamic = nullptr;
    for (ElfW(Half) i = 0; i < object.phnum; ++i) {
        if (object.phdr[i].p_type == PT_DYNAMIC) {
            dynamic = reinterpret_cast<const ElfW(Dyn)*>(object.base + object.phdr[i].p_vaddr);
        }
    }
    if (dynamic == nullptr) {
        return {};
    }
    ElfW(Addr) strtab = 0;
    std::vector<ElfW(Xword)> offsets;
    for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
        if (d->d_tag == DT_STRTAB) {
            strtab = d->d_un.d_ptr;
        } else if (d->d_tag == DT_NEEDED) {
            offsets.push_back(d->d_un.d_val);
        }
    }
    if (strtab == 0) {
        return {};
    }
    // glibc relocates the dynamic section's addresses in place; a loader that
    // keeps it read-only (musl, glibc on MIPS and RISC-V) leaves the link-time one.
    if (strtab < object.base) {
        strtab += object.base;
    }
    std::vector<std::string_view> names;
    for (ElfW(Xword) offset : offsets) {
        names.emplace_back(reinterpret_cast<const char*>(strtab + offset));
    }
    return names;
}

// The loaded object that the DT_NEEDED entry `needed` resolved to: the one
// of that path, for a name with a slash; else the first of that file name
// (the loader keeps one object per name it searched for).
const LoadedObject* resolve(const std::vector<LoadedObject>& objects, std::string_view needed) {
    const bool path = needed.find('/') != std::string_view::npos;
    for (const LoadedObject& o : objects) {
        if (!o.name.empty() && (path ? o.name == needed : path_file_name(o.name) == needed)) {
            return &o;
        }
    }
    return nullptr;
}

}  // namespace

std::string icd_library_path(cl_platform_id platform) {
    if (platform == nullptr) {
        return {};
    }
    // The ICD spec makes every platform object begin with a pointer to its
    // vendor's dispatch table; the ICD loader has just called through it.
    const auto* table = *reinterpret_cast<const cl_icd_dispatch* const*>(platform);
    if (table == nullptr) {
        return {};
    }
    Dl_info info{};
    void* entry = reinterpret_cast<void*>(table->clGetPlatformInfo);
    if (entry == nullptr || ::dladdr(entry, &info) == 0 || info.dli_fname == nullptr) {
        return {};
    }
    return info.dli_fname;
}

bool is_compiler_library(std::string_view name) {
    return std::any_of(std::begin(kCompilerLibraryPrefixes), std::end(kCompilerLibraryPrefixes),
                       [&](std::string_view prefix) { return name.starts_with(prefix); });
}

std::vector<std::string> linked_compiler_libraries(const std::string& library) {
    std::vector<LoadedObject> objects;
    ::dl_iterate_phdr(collect, &objects);
    const auto root = std::find_if(objects.begin(), objects.end(),
                                   [&](const LoadedObject& o) { return o.name == library; });
    if (library.empty() || root == objects.end()) {
        return {};
    }
    // Only compiler libraries are walked further: what they need is a
    // compiler library or none of ours (the C and C++ runtimes, zlib, …).
    std::vector<const LoadedObject*> todo{&*root};
    std::vector<const LoadedObject*> seen{&*root};
    std::vector<std::string> found;
    while (!todo.empty()) {
        const LoadedObject* next = todo.back();
        todo.pop_back();
        for (std::string_view needed : needed_by(*next)) {
            if (!is_compiler_library(path_file_name(needed))) {
                continue;
            }
            const LoadedObject* o = resolve(objects, needed);
            if (o == nullptr || std::find(seen.begin(), seen.end(), o) != seen.end()) {
                continue;
            }
            seen.push_back(o);
            todo.push_back(o);
            found.emplace_back(o->name);
        }
    }
    std::sort(found.begin(), found.end());
    return found;
}

}  // namespace kcache::device_db
