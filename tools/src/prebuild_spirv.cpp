#include "prebuild_spirv.hpp"

#include "cli.hpp"
#include "kcache/service/keys.hpp"

namespace kcache::cli {
namespace {

constexpr const char* kProducer = "kcache-prebuild 0.1 (SPIR-V)";

// Builds and stores the SPIR-V of `variant`; error: what failed.
Result<Ok, std::string> build_one(const kernels::Variant& variant,
                                  const compiler::SpirvCompiler& spirv,
                                  std::chrono::milliseconds timeout, store::Store& scratch) {
    auto rendered = kernels::render(variant);
    if (!rendered) {
        return fail(rendered.error().message);
    }
    const service::CompileInput input{variant.id(), rendered->source, rendered->options,
                                      rendered->entry_points};
    const service::IlTarget target = service::il_target(input);
    compiler::SpirvRequest request;
    request.source = input.source;
    request.options = input.options;
    request.extensions = target.extensions;
    request.spirv_version = target.spirv_version;
    auto module = spirv.compile(request, deadline_after(timeout));
    if (!module) {
        return fail(std::string(compiler::to_string(module.error().kind)) + ": " +
                    module.error().message + "\n" + module.error().log);
    }
    store::Provenance prov{
        kProducer, store::Origin::aot,
        std::chrono::duration_cast<std::chrono::milliseconds>(module->elapsed).count(),
        module->log};
    const auto* data = reinterpret_cast<const std::uint8_t*>(module->spirv.data());
    auto put =
        scratch.put(service::il_key_fields(target, input), {data, module->spirv.size()}, prov);
    if (!put) {
        return fail(put.error().message);
    }
    return Ok{};
}

}  // namespace

int build_spirv_entries(const std::vector<kernels::Variant>& variants, const std::string& tmpdir,
                        std::chrono::milliseconds timeout, store::Store& scratch,
                        Progress& progress) {
    compiler::SpirvConfig config;
    config.scratch_root = tmpdir;
    const compiler::SpirvCompiler spirv(config);
    int failed = 0;
    for (const kernels::Variant& v : variants) {
        auto built = build_one(v, spirv, timeout, scratch);
        if (!built) {
            ++failed;
            progress.item("FAILED SPIR-V of " + v.id() + ": " + built.error());
        } else {
            progress.item("built SPIR-V of " + v.id());
        }
    }
    return failed;
}

}  // namespace kcache::cli
