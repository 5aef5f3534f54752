#pragma once
// Progress of a batch of compiles: a bar redrawn in place when stderr is a
// terminal, one line per finished item otherwise (logs, CI). Thread-safe.

#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>

namespace kcache::cli {

enum class ProgressStyle { automatic, lines, quiet };

class Progress {
  public:
    // `total` items; `style` automatic picks a bar on a TTY, else lines.
    Progress(std::size_t total, ProgressStyle style);
    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;

    // Records one finished item described by `line` ("built dot:dtype=f32 (0.4 s)").
    void item(const std::string& line);
    // Prints `line` above the bar (or as a plain line).
    void note(const std::string& line);
    // Clears the bar; call before printing the summary.
    void finish();

  private:
    void draw_bar();

    std::mutex mutex_;
    std::size_t total_;
    std::size_t done_ = 0;
    bool bar_;
    bool quiet_;
};

}  // namespace kcache::cli
