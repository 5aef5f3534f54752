#include "opencl_devices.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "cli.hpp"
#include "probe.hpp"

namespace kcache::cli {
namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// Ends the process with exit code 5 unless disarmed (destroyed) within
// `limit`: a driver call that never returns cannot be interrupted, but the
// command can still give up instead of hanging.
class HangGuard {
  public:
    HangGuard(std::chrono::milliseconds limit, std::string what)
        : thread_([this, limit, what = std::move(what)] {
              std::unique_lock lock(mutex_);
              if (!cv_.wait_for(lock, limit, [this] { return done_; })) {
                  std::fprintf(stderr, "kcache: %s did not finish within %lld ms; giving up\n",
                               what.c_str(), static_cast<long long>(limit.count()));
                  ::_exit(static_cast<int>(Exit::environment));
              }
          }) {}
    HangGuard(const HangGuard&) = delete;
    HangGuard& operator=(const HangGuard&) = delete;
    ~HangGuard() {
        {
            std::lock_guard lock(mutex_);
            done_ = true;
        }
        cv_.notify_one();
        thread_.join();
    }

  private:
    std::mutex mutex_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

}  // namespace

std::vector<std::size_t> select_devices(const std::vector<device_db::DeviceIdentity>& ids,
                                        const std::optional<std::string>& selector) {
    std::vector<std::size_t> chosen;
    const bool numeric = selector && !selector->empty() &&
                         selector->find_first_not_of("0123456789") == std::string::npos;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const bool by_index = numeric && std::to_string(i) == *selector;
        const bool by_name =
            !numeric && selector && lower(ids[i].name).find(lower(*selector)) != std::string::npos;
        if (!selector || by_index || by_name) {
            chosen.push_back(i);
        }
    }
    return chosen;
}

std::optional<std::vector<device_db::DeviceIdentity>> probe_selected(
    std::string_view command, const std::optional<std::string>& selector, int& exit_code) {
    auto probed = probe_devices(kDefaultProbeTimeout);
    if (!probed) {
        exit_code = report(Exit::environment, command, probed.error().message);
        return std::nullopt;
    }
    if (probed->empty()) {
        exit_code = report(Exit::environment, command, "no OpenCL device found");
        return std::nullopt;
    }
    std::vector<device_db::DeviceIdentity> out;
    for (std::size_t i : select_devices(*probed, selector)) {
        out.push_back((*probed)[i]);
    }
    if (out.empty()) {
        exit_code =
            report(Exit::not_found, command,
                   "no OpenCL device matches '" + selector.value_or("") + "' (see kcache devices)");
        return std::nullopt;
    }
    return out;
}

std::optional<std::vector<OpenedDevice>> open_devices(std::string_view command,
                                                      const std::optional<std::string>& selector,
                                                      int& exit_code) {
    auto listed = [] {
        HangGuard guard(kDefaultProbeTimeout, "OpenCL platform initialisation");
        return device_db::list_opencl_devices();
    }();
    if (!listed) {
        exit_code = report(Exit::environment, command, listed.error().message);
        return std::nullopt;
    }
    std::vector<device_db::DeviceIdentity> ids;
    for (const auto& d : listed->devices) {
        ids.push_back(d.identity);
    }
    std::vector<OpenedDevice> out;
    for (std::size_t i : select_devices(ids, selector)) {
        device_db::OpenClDevice& d = listed->devices[i];
        const cl_context_properties props[] = {
            CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(d.platform), 0};
        cl_int err = CL_SUCCESS;
        cl::ContextHandle context(clCreateContext(props, 1, &d.device, nullptr, nullptr, &err));
        if (err != CL_SUCCESS || !context) {
            exit_code = report(
                Exit::environment, command,
                "clCreateContext failed (" + std::to_string(err) + ") for " + d.identity.name);
            return std::nullopt;
        }
        out.push_back({d.device, std::move(context), std::move(d.identity)});
    }
    if (out.empty()) {
        exit_code = ids.empty() ? report(Exit::environment, command, "no OpenCL device found")
                                : report(Exit::not_found, command,
                                         "no OpenCL device matches '" + selector.value_or("") +
                                             "' (see kcache devices)");
        return std::nullopt;
    }
    return out;
}

}  // namespace kcache::cli
