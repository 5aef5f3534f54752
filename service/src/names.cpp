// The library's version and the process's log handler (the names of the
// enumerators are observe/'s: kcache/observe/names.hpp).
#include "kcache/common/log.hpp"
#include "kcache/service/service_api.hpp"

namespace kcache {
inline namespace core {

const char* version() noexcept {
    return KCACHE_VERSION_STRING;
}

void set_log_handler(LogHandler handler) noexcept {
    try {
        if (!handler) {
            logging::set_sink({});
            return;
        }
        logging::set_sink([h = std::move(handler)](logging::Level level, std::string_view m) {
            h(level == logging::Level::error ? LogLevel::error : LogLevel::warning, m);
        });
    } catch (...) {
        // Only std::function's allocation can throw; the previous sink stays.
    }
}

}  // namespace core
}  // namespace kcache
