// KCACHE_METRICS_FILE (metrics.hpp): the process's metrics in the Prometheus
// text format, for node_exporter's textfile collector, which may read the
// file at any moment: each write goes to a temporary file in the same
// directory that is then renamed over the file, so a reader sees the old
// text or the new one, never part of one.

#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>

#include "kcache/common/log.hpp"
#include "kcache/common/replace_file.hpp"
#include "kcache/observe/metrics.hpp"

namespace kcache::metrics {
namespace {

std::filesystem::path with_pid(const std::filesystem::path& path) {
    std::string s = path.string();
    const std::string pid = std::to_string(::getpid());
    for (std::size_t at; (at = s.find("%p")) != std::string::npos;) {
        s.replace(at, 2, pid);
    }
    return s;
}

std::string process_text() {
    CacheStats s;
    snapshot(s);
    snapshot_counters(s);
    Exposition out(Format::prometheus);
    add_process_metrics(out, s);
    return out.finish();
}

// The writer thread of write_file_periodically: one per process, stopped
// and joined (after a last write) when the process exits.
class Writer {
  public:
    ~Writer() { stop(); }

    void start(std::filesystem::path path, std::chrono::milliseconds interval) {
        {
            std::lock_guard g(mu_);
            path_ = std::move(path);
            interval_ = interval;
            reported_ = false;
        }
        cv_.notify_all();  // an earlier thread writes to the new path now
        if (!thread_ || owner_ != ::getpid()) {
            (void)thread_.release();  // a forked child's copy names its parent's thread
            owner_ = ::getpid();
            thread_ = std::make_unique<std::thread>([this] { run(); });
        }
    }

    void stop() {
        {
            std::lock_guard g(mu_);
            stopping_ = true;
        }
        cv_.notify_all();
        if (thread_ && owner_ == ::getpid()) {
            thread_->join();
            thread_.reset();
        } else {
            (void)thread_.release();  // a forked child's copy of its parent's thread: not ours
        }
    }

  private:
    void run() {
        std::unique_lock lock(mu_);
        for (;;) {
            const std::filesystem::path path = path_;
            lock.unlock();
            std::string error;
            const bool ok = path.empty() || write_file(path, error);
            lock.lock();
            if (!ok && !reported_) {
                reported_ = true;  // once: the next writes would say the same
                logging::warning("metrics file " + path.string() + ": " + error);
            }
            if (stopping_) {
                return;  // the write above was the last, at exit
            }
            cv_.wait_for(lock, interval_);
        }
    }

    std::mutex mu_;
    std::condition_variable cv_;
    std::filesystem::path path_;
    std::chrono::milliseconds interval_{15'000};
    bool stopping_ = false;
    bool reported_ = false;
    pid_t owner_ = 0;
    std::unique_ptr<std::thread> thread_;
};

}  // namespace

bool write_file(const std::filesystem::path& target, std::string& error) {
    // Readable by the collector, which usually runs as another user.
    return replace_file(with_pid(target), process_text(), 0644, error);
}

void write_file_periodically(const std::filesystem::path& path,
                             std::chrono::milliseconds interval) {
    // Destroyed at exit, when static objects are: its destructor writes last.
    static Writer writer;
    writer.start(path, std::max(interval, std::chrono::milliseconds(100)));
}

}  // namespace kcache::metrics
