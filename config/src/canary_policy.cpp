// The canary setting (KCACHE_CANARY): the names of its values. The
// service's canary gate (service/src/ladder/canary_gate.cpp) acts on it.
#include "settings.hpp"

namespace kcache::service {

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
