// The rungs' one way to load bytes (rungs.hpp): a binary built elsewhere is
// loaded in kcache-verify first (binary_vouch.hpp), then every binary is
// loaded here, timed and traced (observe.hpp).

#include "binary_vouch.hpp"
#include "kcache/observe/trace.hpp"
#include "observe.hpp"
#include "rungs.hpp"

namespace kcache::service {

Result<ProgramRef, std::string> load_checked(const RungParts& parts, Ask& ask,
                                             std::span<const std::uint8_t> bytes,
                                             const Vouch& vouch) {
    const Plan& plan = ask.planned();
    if (vouch.first) {
        trace::Span span("vouch", "gate");
        if (auto bad = vouch_for_binary(verify_helper_beside(parts.config.jit_helper), vouch.kept,
                                        plan.fields, bytes, plan.input.options)) {
            return fail(std::move(*bad));
        }
    }
    auto program = observed_load(parts.loader, parts.config.metrics, ask.context, ask.device, bytes,
                                 plan.input.options);
    if (!program) {
        return fail(program.error().message);
    }
    return std::move(*program);
}

}  // namespace kcache::service
