#include "progress.hpp"

#include <unistd.h>

#include "kcache/config/text.hpp"

namespace kcache::cli {

Progress::Progress(std::size_t total, ProgressStyle style)
    : total_(total),
      bar_(style == ProgressStyle::automatic && ::isatty(STDERR_FILENO)),
      quiet_(style == ProgressStyle::quiet) {}

void Progress::item(const std::string& line) {
    std::lock_guard lock(mutex_);
    ++done_;
    if (quiet_) {
        return;
    }
    if (bar_) {
        draw_bar();
    } else {
        std::fprintf(stderr, "[%zu/%zu] %s\n", done_, total_, service::printable(line).c_str());
    }
}

void Progress::note(const std::string& line) {
    std::lock_guard lock(mutex_);
    if (quiet_) {
        return;
    }
    std::fprintf(stderr, bar_ ? "\r\033[K%s\n" : "%s\n", service::printable(line).c_str());
    if (bar_) {
        draw_bar();
    }
}

void Progress::finish() {
    std::lock_guard lock(mutex_);
    if (bar_) {
        std::fprintf(stderr, "\r\033[K");
    }
    std::fflush(stderr);
}

void Progress::draw_bar() {
    constexpr std::size_t width = 40;
    const std::size_t filled = total_ ? done_ * width / total_ : width;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu", std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), done_, total_);
    std::fflush(stderr);
}

}  // namespace kcache::cli
