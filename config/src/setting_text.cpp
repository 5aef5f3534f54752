// Config's settings as text (settings.hpp), through their rows.

#include "kcache/config/setting_table.hpp"
#include "settings.hpp"

namespace kcache::service {

bool is_setting(std::string_view key) noexcept {
    return find_setting(key) != nullptr;
}

std::optional<std::string> setting_text(const Config& config, std::string_view key) {
    const SettingRow* row = find_setting(key);
    if (row == nullptr) {
        return std::nullopt;
    }
    if (row->text != nullptr) {
        return row->text(*row, config);
    }
    auto it = config.origins.find(std::string(key));
    return it != config.origins.end() ? it->second.first : std::string();
}

}  // namespace kcache::service
