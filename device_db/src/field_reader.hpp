#pragma once
// Reads the members of one JSON object of a data file, checking names and types and
// recording each problem at the line of the member (or of the object when a member is
// missing). Callers go on after a problem so that one run reports them all.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kcache/device_db/error.hpp"
#include "kcache/device_db/ids.hpp"
#include "kcache/device_db/version.hpp"
#include "located_json.hpp"

namespace kcache::device_db::detail {

enum class Need { required, optional };

// Where problems go, with the file name they carry.
struct Problems {
    std::string file;
    std::vector<Diagnostic> list;

    void add(DeviceDbErrc code, int line, std::string problem) {
        list.push_back(Diagnostic{code, file, line, std::move(problem)});
    }
};

class FieldReader {
  public:
    // `what` names the object in messages ("device", "quirk match").
    FieldReader(const LocatedJson& doc, const nlohmann::json& object, std::string pointer,
                std::string what, Problems& problems);

    // Reports each member whose name is not in `allowed` as DeviceDbErrc::unknown_key.
    void allow_only(std::initializer_list<std::string_view> allowed);

    std::optional<std::string> string(std::string_view key, Need need);
    std::optional<std::uint32_t> hex(std::string_view key, Need need);
    std::optional<bool> boolean(std::string_view key, Need need);
    std::optional<std::uint64_t> unsigned_number(std::string_view key, Need need);
    std::optional<DriverVersion> version(std::string_view key, Need need);
    // An array of strings.
    std::optional<std::vector<std::string>> strings(std::string_view key, Need need);
    // An array of hex id strings.
    std::optional<std::vector<std::uint32_t>> hex_list(std::string_view key, Need need);
    // A string that must be one of `allowed`.
    std::optional<std::string> one_of(std::string_view key, Need need,
                                      std::initializer_list<std::string_view> allowed);
    // A nested object or array member, for the caller to read; nullptr when absent or of
    // the wrong type (reported).
    const nlohmann::json* object(std::string_view key, Need need);
    const nlohmann::json* array(std::string_view key, Need need);

    bool has(std::string_view key) const { return object_.contains(key); }
    int line() const { return doc_.line_of(pointer_); }
    int line_of(std::string_view key) const { return doc_.line_of(member_pointer(key)); }
    std::string member_pointer(std::string_view key) const { return child_pointer(pointer_, key); }
    const std::string& what() const { return what_; }
    Problems& problems() { return problems_; }

  private:
    // The member `key` if present and of a type `is_type` accepts; reports otherwise.
    const nlohmann::json* member(std::string_view key, Need need,
                                 bool (*is_type)(const nlohmann::json&), const char* type_name);

    const LocatedJson& doc_;
    const nlohmann::json& object_;
    std::string pointer_;
    std::string what_;
    Problems& problems_;
};

}  // namespace kcache::device_db::detail
