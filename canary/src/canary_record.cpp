// The canary's verdict records: identity, the JSON form of a record (grammar
// in kcache/canary/canary.hpp) and the files under <store>/canary/.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "json_field.hpp"
#include "kcache/canary/canary.hpp"
#include "kcache/common/fd_io.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/common/sha256.hpp"
#include "kcache/common/unique_fd.hpp"
#include "kcache/common/work.hpp"
#include "kcache/device_db/jit_key.hpp"

namespace kcache::canary {
namespace {

using nlohmann::json;
using service::json_field;

constexpr int kFormat = 1;
// A record names a few dozen variants; anything far larger is not one.
constexpr std::size_t kMaxRecordBytes = 1u << 20;

json identity_json(const DriverIdentity& i) {
    return {{"vendor_id", i.vendor_id}, {"vendor", i.vendor},     {"device_id", i.device_id},
            {"device", i.device},       {"platform", i.platform}, {"driver", i.driver},
            {"compiler", i.compiler}};
}

DriverIdentity identity_of(const json& j) {
    return {json_field<std::uint32_t>(j, "vendor_id"), json_field<std::string>(j, "vendor"),
            json_field<std::uint32_t>(j, "device_id"), json_field<std::string>(j, "device"),
            json_field<std::string>(j, "platform"),    json_field<std::string>(j, "driver"),
            json_field<std::string>(j, "compiler")};
}

VerdictState state_of(const std::string& text) {
    for (VerdictState s : {VerdictState::validated, VerdictState::suspect, VerdictState::not_run}) {
        if (text == to_string(s)) {
            return s;
        }
    }
    throw std::runtime_error("unknown verdict state \"" + text + "\"");
}

json differential_json(const std::optional<Differential>& d) {
    if (!d) {
        return nullptr;
    }
    return {{"previous_driver", d->previous_driver},
            {"result", d->result},
            {"max_difference", d->max_difference ? json(*d->max_difference) : json(nullptr)},
            {"detail", d->detail}};
}

constexpr const char* kDifferentialResults[] = {"agree",          "both_right", "new_wrong",
                                                "previous_wrong", "both_wrong", "not_loaded",
                                                "timeout",        "crashed"};

std::optional<Differential> differential_of(const json& j) {
    if (!j.contains("differential") || j.at("differential").is_null()) {
        return std::nullopt;
    }
    const json& d = j.at("differential");
    Differential out{json_field<std::string>(d, "previous_driver"),
                     json_field<std::string>(d, "result"), std::nullopt,
                     json_field<std::string>(d, "detail")};
    if (std::find(std::begin(kDifferentialResults), std::end(kDifferentialResults), out.result) ==
        std::end(kDifferentialResults)) {
        throw std::runtime_error("unknown differential result \"" + out.result + "\"");
    }
    if (!d.contains("max_difference")) {
        throw std::runtime_error("missing field \"max_difference\"");
    }
    if (!d.at("max_difference").is_null()) {
        out.max_difference = json_field<double>(d, "max_difference");
    }
    return out;
}

Verdict verdict_of(const json& j) {
    Verdict v{json_field<std::string>(j, "variant"),
              state_of(json_field<std::string>(j, "state")),
              json_field<std::string>(j, "check"),
              json_field<std::uint32_t>(j, "seed"),
              std::nullopt,
              json_field<std::string>(j, "detail"),
              differential_of(j)};
    if (!j.contains("max_error")) {
        throw std::runtime_error("missing field \"max_error\"");
    }
    if (!j.at("max_error").is_null()) {
        v.max_error = json_field<double>(j, "max_error");
    }
    return v;
}

std::filesystem::path record_file(const std::filesystem::path& dir, const std::string& id) {
    return dir / (id + ".json");
}

std::filesystem::path record_path(const std::filesystem::path& dir, const DriverIdentity& id) {
    return record_file(dir, id.id());
}

}  // namespace

std::string DriverIdentity::id() const {
    return sha256_hex(identity_json(*this).dump()).substr(0, 16);
}

std::string DriverIdentity::describe() const {
    return device + ", driver " + driver + " (" + platform + ")";
}

DriverIdentity driver_identity(const device_db::DeviceIdentity& device) {
    const store::KeyFields f = device_db::jit_key_fields(device, {});
    return {f.vendor_id,     device.vendor,    f.pci_device_id, f.device_name,
            f.platform_name, f.driver_version, f.compiler_id};
}

const char* to_string(VerdictState state) noexcept {
    switch (state) {
        case VerdictState::validated:
            return "validated";
        case VerdictState::suspect:
            return "suspect";
        case VerdictState::not_run:
            break;
    }
    return "not_run";
}

bool Record::suspect() const {
    for (const Verdict& v : verdicts) {
        if (v.state == VerdictState::suspect) {
            return true;
        }
    }
    return false;
}

const Verdict* verdict_for(const Record& record, const kernels::Variant& variant) {
    const std::string id = variant.id();
    const std::string path = kernels::precision_path(variant);
    const std::string_view act = variant.get("act");
    const Verdict* covering = nullptr;
    bool same_path = false;
    const auto worse = [&covering](const Verdict& v) {
        if (!covering ||
            (v.state == VerdictState::suspect && covering->state != VerdictState::suspect)) {
            covering = &v;
        }
    };
    for (const Verdict& v : record.verdicts) {
        if (v.variant == id) {
            return v.state == VerdictState::not_run ? nullptr : &v;
        }
        auto tested = kernels::parse_variant(v.variant);
        if (!tested || tested->kernel != variant.kernel || v.state == VerdictState::not_run) {
            continue;
        }
        if (kernels::precision_path(*tested) == path) {
            same_path = true;
            worse(v);
        } else if (!act.empty() && tested->get("act") == act) {
            worse(v);
        }
    }
    return same_path ? covering : nullptr;
}

std::filesystem::path canary_dir(const std::filesystem::path& store_dir) {
    return store_dir / "canary";
}

std::string to_json(const Record& r) {
    json verdicts = json::array();
    for (const Verdict& v : r.verdicts) {
        verdicts.push_back({{"variant", v.variant},
                            {"state", to_string(v.state)},
                            {"check", v.check},
                            {"seed", v.seed},
                            {"max_error", v.max_error ? json(*v.max_error) : json(nullptr)},
                            {"detail", v.detail},
                            {"differential", differential_json(v.differential)}});
    }
    return json{{"format", kFormat},    {"identity", identity_json(r.identity)},
                {"seed", r.seed},       {"run_at", r.run_at},
                {"wall_ms", r.wall_ms}, {"verdicts", std::move(verdicts)}}
        .dump(2);
}

Result<Record, CanaryError> record_from_json(const std::string& text) {
    try {
        work::add(work::Item::json_parsed);
        const json j = json::parse(text);
        if (json_field<int>(j, "format") != kFormat) {
            return fail(CanaryError{CanaryErrc::damaged, "unknown format"});
        }
        Record r{identity_of(json_field<json>(j, "identity")),
                 json_field<std::uint32_t>(j, "seed"),
                 json_field<std::int64_t>(j, "run_at"),
                 json_field<std::int64_t>(j, "wall_ms"),
                 {}};
        const json verdicts = json_field<json>(j, "verdicts");
        if (!verdicts.is_array()) {
            return fail(CanaryError{CanaryErrc::damaged, "field \"verdicts\" is not a list"});
        }
        for (const json& v : verdicts) {
            r.verdicts.push_back(verdict_of(v));
        }
        return r;
    } catch (const std::exception& e) {
        return fail(CanaryError{CanaryErrc::damaged, e.what()});
    }
}

std::optional<Record> load_record(const std::filesystem::path& dir,
                                  const DriverIdentity& identity) {
    return load_record(dir, identity, identity.id());
}

std::optional<Record> load_record(const std::filesystem::path& dir, const DriverIdentity& identity,
                                  const std::string& identity_id) {
    auto text = read_regular_file(record_file(dir, identity_id), kMaxRecordBytes);
    if (!text) {
        return std::nullopt;
    }
    auto record = record_from_json(*text);
    if (!record || !(record->identity == identity)) {
        return std::nullopt;
    }
    return std::move(*record);
}

std::vector<Record> load_records(const std::filesystem::path& dir) {
    std::vector<Record> records;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        if (e.path().extension() != ".json") {
            continue;
        }
        auto text = read_regular_file(e.path(), kMaxRecordBytes);
        if (!text) {
            continue;
        }
        auto record = record_from_json(*text);
        if (record && e.path().stem() == record->identity.id()) {
            records.push_back(std::move(*record));
        }
    }
    return records;
}

Status<std::string> save_record(const std::filesystem::path& dir, const Record& record) {
    // The store's directory first (the CLI may run the canary before any store exists).
    (void)::mkdir(dir.parent_path().c_str(), 0700);
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        return fail(dir.string() + ": " + std::strerror(errno));
    }
    const std::filesystem::path path = record_path(dir, record.identity);
    std::string tmp = path.string() + ".tmp.XXXXXX";
    UniqueFd fd(::mkstemp(tmp.data()));
    if (!fd.valid()) {
        return fail(tmp + ": " + std::strerror(errno));
    }
    const std::string text = to_json(record) + "\n";
    const bool written = write_all(fd.get(), text.data(), text.size()) && ::fsync(fd.get()) == 0;
    const int saved = errno;
    fd.reset();
    if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
        const int err = written ? errno : saved;
        ::unlink(tmp.c_str());
        return fail(path.string() + ": " + std::strerror(err));
    }
    return Ok{};
}

}  // namespace kcache::canary
