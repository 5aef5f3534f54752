// The canary setting (KCACHE_CANARY): its values and their names. The
// service's canary gate (service/src/ladder/canary_gate.cpp) acts on it.
#include "settings.hpp"

namespace kcache::service {

std::string apply_canary_policy(Config& c, const std::string& value) {
    for (CanaryPolicy p : {CanaryPolicy::off, CanaryPolicy::warn, CanaryPolicy::enforce}) {
        if (value == to_string(p)) {
            c.canary = p;
            return {};
        }
    }
    return "expected off, warn or enforce";
}

const char* to_string(CanaryPolicy policy) noexcept {
    switch (policy) {
        case CanaryPolicy::off:
            return "off";
        case CanaryPolicy::enforce:
            return "enforce";
        case CanaryPolicy::warn:
            break;
    }
    return "warn";
}

}  // namespace kcache::service
