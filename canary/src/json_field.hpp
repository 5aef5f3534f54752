#pragma once
// One member of a JSON object, for the service's small JSON formats (canary
// records, errata): a missing or mistyped member throws std::runtime_error
// whose text names it, so that a parse error says which field is wrong.

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace kcache::service {

// The member `name` of `j` as T; throws naming it when `j` is no object,
// lacks it, or holds another type there.
template <class T>
T json_field(const nlohmann::json& j, const char* name) {
    if (!j.is_object() || !j.contains(name)) {
        throw std::runtime_error(std::string("missing field \"") + name + "\"");
    }
    try {
        return j.at(name).get<T>();
    } catch (const nlohmann::json::exception&) {
        throw std::runtime_error(std::string("field \"") + name + "\" has the wrong type");
    }
}

}  // namespace kcache::service
