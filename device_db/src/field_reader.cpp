#include "field_reader.hpp"

#include <algorithm>

namespace kcache::device_db::detail {
namespace {

using nlohmann::json;

bool is_string(const json& j) {
    return j.is_string();
}
bool is_bool(const json& j) {
    return j.is_boolean();
}
bool is_unsigned(const json& j) {
    return j.is_number_unsigned();
}
bool is_object(const json& j) {
    return j.is_object();
}
bool is_array(const json& j) {
    return j.is_array();
}

std::string in_quotes(std::string_view s) {
    return "\"" + std::string(s) + "\"";
}

}  // namespace

FieldReader::FieldReader(const LocatedJson& doc, const json& object, std::string pointer,
                         std::string what, Problems& problems)
    : doc_(doc),
      object_(object),
      pointer_(std::move(pointer)),
      what_(std::move(what)),
      problems_(problems) {}

void FieldReader::allow_only(std::initializer_list<std::string_view> allowed) {
    for (const auto& [key, value] : object_.items()) {
        if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
            problems_.add(DeviceDbErrc::unknown_key, line_of(key),
                          "unknown key " + in_quotes(key) + " in " + what_);
        }
    }
}

const json* FieldReader::member(std::string_view key, Need need, bool (*is_type)(const json&),
                                const char* type_name) {
    auto it = object_.find(key);
    if (it == object_.end()) {
        if (need == Need::required) {
            problems_.add(DeviceDbErrc::missing_key, line(),
                          what_ + " lacks required key " + in_quotes(key));
        }
        return nullptr;
    }
    if (!is_type(*it)) {
        problems_.add(DeviceDbErrc::wrong_type, line_of(key),
                      in_quotes(key) + " in " + what_ + " must be " + type_name);
        return nullptr;
    }
    return &*it;
}

std::optional<std::string> FieldReader::string(std::string_view key, Need need) {
    const json* j = member(key, need, is_string, "a string");
    return j ? std::optional(j->get<std::string>()) : std::nullopt;
}

std::optional<std::uint32_t> FieldReader::hex(std::string_view key, Need need) {
    auto text = string(key, need);
    if (!text) {
        return std::nullopt;
    }
    auto id = parse_hex_id(*text);
    if (!id) {
        problems_.add(DeviceDbErrc::bad_hex, line_of(key),
                      "malformed hex id " + in_quotes(*text) + " for " + in_quotes(key) +
                          " (expected 0x followed by 1 to 8 hex digits)");
    }
    return id;
}

std::optional<bool> FieldReader::boolean(std::string_view key, Need need) {
    const json* j = member(key, need, is_bool, "true or false");
    return j ? std::optional(j->get<bool>()) : std::nullopt;
}

std::optional<std::uint64_t> FieldReader::unsigned_number(std::string_view key, Need need) {
    const json* j = member(key, need, is_unsigned, "a non-negative integer");
    return j ? std::optional(j->get<std::uint64_t>()) : std::nullopt;
}

std::optional<DriverVersion> FieldReader::version(std::string_view key, Need need) {
    auto text = string(key, need);
    if (!text) {
        return std::nullopt;
    }
    auto v = DriverVersion::parse(*text);
    if (!v) {
        problems_.add(DeviceDbErrc::bad_version, line_of(key),
                      "malformed version " + in_quotes(*text) + " for " + in_quotes(key) +
                          " (expected numbers separated by dots)");
    }
    return v;
}

std::optional<std::vector<std::string>> FieldReader::strings(std::string_view key, Need need) {
    const json* j = member(key, need, is_array, "an array of strings");
    if (!j) {
        return std::nullopt;
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < j->size(); ++i) {
        if (!(*j)[i].is_string()) {
            problems_.add(DeviceDbErrc::wrong_type,
                          doc_.line_of(child_pointer(member_pointer(key), i)),
                          in_quotes(key) + " in " + what_ + " must hold only strings");
            return std::nullopt;
        }
        out.push_back((*j)[i].get<std::string>());
    }
    return out;
}

std::optional<std::vector<std::uint32_t>> FieldReader::hex_list(std::string_view key, Need need) {
    auto texts = strings(key, need);
    if (!texts) {
        return std::nullopt;
    }
    std::vector<std::uint32_t> out;
    for (std::size_t i = 0; i < texts->size(); ++i) {
        auto id = parse_hex_id((*texts)[i]);
        if (!id) {
            problems_.add(DeviceDbErrc::bad_hex,
                          doc_.line_of(child_pointer(member_pointer(key), i)),
                          "malformed hex id " + in_quotes((*texts)[i]) + " in " + in_quotes(key));
            return std::nullopt;
        }
        out.push_back(*id);
    }
    return out;
}

std::optional<std::string> FieldReader::one_of(std::string_view key, Need need,
                                               std::initializer_list<std::string_view> allowed) {
    auto text = string(key, need);
    if (text && std::find(allowed.begin(), allowed.end(), *text) == allowed.end()) {
        std::string list;
        for (std::string_view a : allowed) {
            list += (list.empty() ? "" : ", ") + std::string(a);
        }
        problems_.add(DeviceDbErrc::bad_value, line_of(key),
                      in_quotes(key) + " must be one of " + list + ", not " + in_quotes(*text));
        return std::nullopt;
    }
    return text;
}

const json* FieldReader::object(std::string_view key, Need need) {
    return member(key, need, is_object, "an object");
}

const json* FieldReader::array(std::string_view key, Need need) {
    return member(key, need, is_array, "an array");
}

}  // namespace kcache::device_db::detail
