#include "probe.hpp"

#include <iostream>

#include "cli.hpp"
#include "kcache/compiler/subprocess.hpp"
#include "kcache/device_db/ids.hpp"
#include "kcache/device_db/version.hpp"

namespace kcache::cli {
namespace {

using device_db::DeviceIdentity;
using device_db::DeviceType;
using nlohmann::json;

DeviceType type_from_name(const std::string& s) {
    if (s == "cpu") {
        return DeviceType::cpu;
    }
    if (s == "gpu") {
        return DeviceType::gpu;
    }
    return s == "accelerator" ? DeviceType::accelerator : DeviceType::other;
}

std::optional<device_db::Uuid> uuid_from_hex(const std::string& text) {
    std::string hex;
    for (char c : text) {
        if (c != '-') {
            hex += c;
        }
    }
    if (hex.size() != 32) {
        return std::nullopt;
    }
    device_db::Uuid u{};
    for (std::size_t i = 0; i < u.size(); ++i) {
        u[i] = static_cast<std::uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
    }
    return u;
}

}  // namespace

json identity_to_json(const DeviceIdentity& id) {
    json j = {{"name", id.name},
              {"vendor", id.vendor},
              {"vendor_id", device_db::hex_id(id.vendor_id)},
              {"type", device_db::to_string(id.type)},
              {"driver_version", id.driver_version},
              {"device_version", id.device_version},
              {"platform_name", id.platform_name},
              {"platform_version", id.platform_version},
              {"opencl_c_version", id.opencl_c_version},
              {"address_bits", id.address_bits},
              {"extensions", id.extensions},
              {"fp16", id.fp16},
              {"fp64", id.fp64},
              {"max_work_group_size", id.max_work_group_size},
              {"compute_units", id.compute_units},
              {"max_mem_alloc", id.max_mem_alloc},
              {"compiler_files", id.compiler_files}};
    j["pci_device_id"] = id.pci_device_id ? json(device_db::hex_id(*id.pci_device_id)) : json();
    j["ip_version"] =
        id.ip_version ? json(device_db::IpVersion::decode(*id.ip_version).to_string()) : json();
    j["ip_version_raw"] = id.ip_version ? json(*id.ip_version) : json();
    j["device_uuid"] = id.device_uuid ? json(device_db::uuid_to_string(*id.device_uuid)) : json();
    j["driver_uuid"] = id.driver_uuid ? json(device_db::uuid_to_string(*id.driver_uuid)) : json();
    j["pci_bus"] = id.pci_bus ? json(id.pci_bus->to_string()) : json();
    return j;
}

DeviceIdentity identity_from_json(const json& j) {
    DeviceIdentity id;
    id.name = j.at("name").get<std::string>();
    id.vendor = j.at("vendor").get<std::string>();
    id.vendor_id = device_db::parse_hex_id(j.at("vendor_id").get<std::string>()).value_or(0);
    id.type = type_from_name(j.at("type").get<std::string>());
    id.driver_version = j.at("driver_version").get<std::string>();
    id.device_version = j.at("device_version").get<std::string>();
    id.platform_name = j.at("platform_name").get<std::string>();
    id.platform_version = j.at("platform_version").get<std::string>();
    id.opencl_c_version = j.at("opencl_c_version").get<std::string>();
    id.address_bits = j.at("address_bits").get<std::uint32_t>();
    id.extensions = j.at("extensions").get<std::vector<std::string>>();
    id.fp16 = j.at("fp16").get<bool>();
    id.fp64 = j.at("fp64").get<bool>();
    id.max_work_group_size = j.at("max_work_group_size").get<std::size_t>();
    id.compute_units = j.at("compute_units").get<std::uint32_t>();
    id.max_mem_alloc = j.at("max_mem_alloc").get<std::uint64_t>();
    id.compiler_files = j.at("compiler_files").get<std::string>();
    if (j.at("pci_device_id").is_string()) {
        id.pci_device_id = device_db::parse_hex_id(j["pci_device_id"].get<std::string>());
    }
    if (j.at("ip_version_raw").is_number()) {
        id.ip_version = j["ip_version_raw"].get<std::uint32_t>();
    }
    if (j.at("device_uuid").is_string()) {
        id.device_uuid = uuid_from_hex(j["device_uuid"].get<std::string>());
    }
    if (j.at("driver_uuid").is_string()) {
        id.driver_uuid = uuid_from_hex(j["driver_uuid"].get<std::string>());
    }
    return id;
}

int run_probe_child() {
    auto devices = device_db::list_opencl_devices();
    if (!devices) {
        std::cerr << "kcache devices: " << devices.error().message << "\n";
        return static_cast<int>(Exit::environment);
    }
    json out = json::array();
    for (const device_db::OpenClDevice& d : devices->devices) {
        out.push_back(identity_to_json(d.identity));
    }
    for (const std::string& skipped : devices->skipped) {
        std::cerr << "kcache devices: skipped " << skipped << "\n";
    }
    std::cout << out.dump() << "\n";
    return 0;
}

Result<std::vector<DeviceIdentity>, ProbeError> probe_devices(std::chrono::milliseconds timeout) {
    compiler::SpawnSpec spec;
    spec.program = self_path();
    spec.args = {"devices", kProbeChildFlag};
    const auto run = compiler::run(spec, deadline_after(timeout));
    switch (run.outcome) {
        case compiler::ChildExit::timed_out:
            return fail(ProbeError{ProbeErrc::timed_out,
                                   "OpenCL platform initialisation did not finish within " +
                                       std::to_string(timeout.count()) + " ms (probe killed)"});
        case compiler::ChildExit::signaled:
            return fail(ProbeError{ProbeErrc::crashed, "the OpenCL probe died of signal " +
                                                           std::to_string(run.signal)});
        case compiler::ChildExit::spawn_failed:
            return fail(ProbeError{ProbeErrc::failed, "cannot start the probe " + spec.program});
        case compiler::ChildExit::exited:
            break;
    }
    if (run.exit_code != 0) {
        return fail(ProbeError{ProbeErrc::failed, "OpenCL probe failed: " + run.err});
    }
    try {
        std::vector<DeviceIdentity> ids;
        for (const json& j : json::parse(run.out)) {
            ids.push_back(identity_from_json(j));
        }
        return ids;
    } catch (const json::exception& e) {
        return fail(
            ProbeError{ProbeErrc::bad_output, std::string("bad probe output: ") + e.what()});
    }
}

std::string describe(const DeviceIdentity& id) {
    return id.name + " (" + id.platform_name + ", driver " + id.driver_version + ")";
}

}  // namespace kcache::cli
