// The layer's counters file (counters_file.hpp).

#include "counters_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <sstream>

#include "kcache/common/unique_fd.hpp"
#include "service.hpp"

namespace kcache::layer {

std::string counters_path(const std::string& dir) {
    return dir + "/layer-counters";
}

void add_counts(const std::string& path, const Counts& add) {
    const UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!fd.valid() || ::flock(fd.get(), LOCK_EX) != 0) {
        return;
    }
    std::string text(4096, '\0');
    const ssize_t n = ::pread(fd.get(), text.data(), text.size(), 0);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    Counts values{};
    std::istringstream in(text);
    std::string key;
    unsigned long long value = 0;
    while (in >> key >> value) {
        for (std::size_t i = 0; i < kVerdictNames.size(); ++i) {
            if (key == kVerdictNames[i]) {
                values[i] = value;
            }
        }
    }
    std::string out;
    for (std::size_t i = 0; i < kVerdictNames.size(); ++i) {
        values[i] += add[i];
        out += std::string(kVerdictNames[i]) + " " + std::to_string(values[i]) + "\n";
    }
    if (::pwrite(fd.get(), out.data(), out.size(), 0) == static_cast<ssize_t>(out.size())) {
        (void)::ftruncate(fd.get(), static_cast<off_t>(out.size()));
    }
}

}  // namespace kcache::layer
