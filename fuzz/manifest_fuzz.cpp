// The warm manifest (`kcache warm --manifest FILE`): the fuzzed bytes are the
// manifest, in a directory that also holds two kernel sources and a
// subdirectory, so that mutated "sources" lists reach files, missing files
// and a directory.
//
// Invariants: nothing crashes, throws or hangs; an error names the manifest;
// every item of an accepted manifest carries source text and a name that
// starts with its kernel's.

#include "fuzz_support.hpp"
#include "manifest.hpp"

namespace {

using kcache::fuzz::check;
namespace fs = std::filesystem;

const fs::path& manifest_dir() {
    static const fs::path dir = [] {
        fs::path d = kcache::fuzz::scratch_dir() / "manifest";
        fs::create_directories(d / "sub");
        kcache::fuzz::write_file(d / "a.cl", "__kernel void a(__global float* x) { x[0] = 1; }\n");
        kcache::fuzz::write_file(d / "sub" / "b.cl", "__kernel void b() {}\n");
        return d;
    }();
    return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const fs::path path = manifest_dir() / "manifest.json";
    kcache::fuzz::write_file(path, {reinterpret_cast<const char*>(data), size});
    auto items = kcache::cli::load_manifest(path);
    if (!items) {
        check(items.error().message.find(path.string()) != std::string::npos,
              "a manifest error does not name the manifest: " + items.error().message);
        return 0;
    }
    check(!items->empty(), "an accepted manifest yields no item");
    for (const auto& item : *items) {
        check(!item.source.empty(), "a manifest item without source text");
    }
    return 0;
}
