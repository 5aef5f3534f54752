// The canary setting (KCACHE_CANARY): the names of its values. Config only
// reads and names it (Config::canary, a plain value); the service above acts
// on it, in the ladder's canary gate.
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
