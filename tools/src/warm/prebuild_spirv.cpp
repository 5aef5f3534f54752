#include "prebuild_spirv.hpp"

#include <atomic>

#include "cli.hpp"
#include "kcache/service/keys.hpp"

namespace kcache::cli {
namespace {

constexpr const char* kProducer = "kcache-prebuild 0.1 (SPIR-V)";

enum class Built { stored, present };

// Builds and stores the SPIR-V of `variant` unless `store` holds it; error:
// what failed.
Result<Built, std::string> build_one(const kernels::Variant& variant,
                                     const compiler::SpirvCompiler& spirv,
                                     std::chrono::milliseconds timeout, store::Store& store) {
    auto rendered = kernels::render(variant);
    if (!rendered) {
        return fail(rendered.error().message);
    }
    const device_db::CompileInput input{variant.id(), rendered->source, rendered->options,
                                        rendered->entry_points};
    const service::IlTarget target = service::il_target(input);
    const store::KeyFields fields = service::il_key_fields(target, input);
    if (store.get(fields)) {
        return Built::present;
    }
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
    auto put = store.put(fields, {data, module->spirv.size()}, prov);
    if (!put) {
        return fail(put.error().message);
    }
    return Built::stored;
}

}  // namespace

std::vector<OptionSpec> with_spirv_tool_options(std::vector<OptionSpec> options) {
    const compiler::SpirvConfig defaults;
    options.push_back(
        {"clang", Arity::value, "PATH", "clang for SPIR-V (default " + defaults.clang_path + ")"});
    options.push_back({"llvm-spirv", Arity::value, "PATH",
                       "SPIR-V translator (default " + defaults.translator_path + ")"});
    return options;
}

compiler::SpirvConfig spirv_config(const Config& config, const ParsedArgs& args) {
    compiler::SpirvConfig c;
    c.clang_path = args.value("clang").value_or(c.clang_path);
    c.translator_path = args.value("llvm-spirv").value_or(c.translator_path);
    c.guard_path = config.jit_helper;  // empty: compiler::default_helper_path()
    c.scratch_root = config.tmpdir.string();
    return c;
}

std::optional<std::string> spirv_tools_problem(const compiler::SpirvConfig& config) {
    auto identity =
        compiler::SpirvCompiler(config).identity(deadline_after(std::chrono::seconds(30)));
    if (identity) {
        return std::nullopt;
    }
    return identity.error().message;
}

SpirvTally build_spirv_entries(const std::vector<kernels::Variant>& variants,
                               const compiler::SpirvConfig& config,
                               std::chrono::milliseconds timeout, std::size_t jobs,
                               store::Store& store, Progress& progress) {
    const compiler::SpirvCompiler spirv(config);
    std::atomic<int> stored{0}, present{0}, failed{0};
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i; (i = next++) < variants.size();) {
            const kernels::Variant& v = variants[i];
            auto built = build_one(v, spirv, timeout, store);
            if (!built) {
                ++failed;
                progress.item("FAILED SPIR-V of " + v.id() + ": " + built.error());
            } else if (*built == Built::present) {
                ++present;
                progress.item("SPIR-V of " + v.id() + " already stored");
            } else {
                ++stored;
                progress.item("built SPIR-V of " + v.id());
            }
        }
    };
    run_parallel(std::min(jobs, variants.size()), worker);
    return {stored.load(), present.load(), failed.load()};
}

}  // namespace kcache::cli
