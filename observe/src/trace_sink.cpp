// Where trace records go (trace.hpp): the file, shared by processes through
// O_APPEND, or the log sink. Every failure (cannot open, cannot write, the
// size bound reached) is said once and ends tracing for the process.

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>

#include "kcache/common/fd_io.hpp"
#include "kcache/common/log.hpp"
#include "kcache/common/unique_fd.hpp"
#include "trace_sink.hpp"

namespace kcache::trace {

std::atomic<bool> detail::g_on{false};

namespace {

constexpr std::string_view kHeader =
    "[{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,"
    "\"args\":{\"name\":\"kcache trace\"}}\n";

struct State {
    std::mutex mu;  // guards everything below
    std::string where;
    std::uint64_t max_bytes = 0;
    bool to_stderr = false;
    UniqueFd fd;
    std::set<std::string> sources;  // digests whose text this process wrote
};

State& state() {
    static State* s = new State;  // never destroyed: threads may trace during exit
    return *s;
}

// Stops tracing and says why (once: nothing is written after it). Under s.mu.
void stop(State& s, const std::string& why) {
    detail::g_on.store(false, std::memory_order_relaxed);
    s.fd.reset();
    logging::warning("trace " + s.where + ": " + why + "; no more trace records from this process");
}

// Opens `s.where` for appending and writes the header when the file is new.
// Under s.mu.
void open_file(State& s) {
    s.fd.reset(::open(s.where.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    if (!s.fd.valid()) {
        stop(s, std::string("cannot open: ") + std::strerror(errno));
        return;
    }
    // The first process to lock an empty file writes the header; the others
    // find it there (they lock before their first record too).
    if (::flock(s.fd.get(), LOCK_EX) != 0) {
        stop(s, std::string("cannot lock: ") + std::strerror(errno));
        return;
    }
    struct stat st {};
    bool ok = ::fstat(s.fd.get(), &st) == 0;
    if (ok && S_ISREG(st.st_mode) && st.st_size == 0) {
        ok = write_all(s.fd.get(), kHeader.data(), kHeader.size());
    }
    const int err = errno;
    ::flock(s.fd.get(), LOCK_UN);
    if (!ok) {
        stop(s, std::string("cannot write: ") + std::strerror(err));
        return;
    }
    detail::g_on.store(true, std::memory_order_relaxed);
}

}  // namespace

void configure(const std::string& where, std::uint64_t max_bytes) {
    State& s = state();
    std::lock_guard g(s.mu);
    if (where == s.where && max_bytes == s.max_bytes) {
        return;  // every Cache of the process configures it; once is enough
    }
    detail::g_on.store(false, std::memory_order_relaxed);
    s.fd.reset();
    s.where = where;
    s.max_bytes = max_bytes;
    s.to_stderr = where == "stderr" || where == "1";  // "1": lines, never a file named 1
    s.sources.clear();
    if (s.to_stderr) {
        detail::g_on.store(true, std::memory_order_relaxed);
    } else if (!where.empty()) {
        open_file(s);
    }
}

bool to_stderr() noexcept {
    State& s = state();
    std::lock_guard g(s.mu);
    return s.to_stderr;
}

bool first_source(const std::string& digest) {
    State& s = state();
    std::lock_guard g(s.mu);
    return s.sources.insert(digest).second;
}

void write_record(std::string_view record) noexcept {
    State& s = state();
    std::lock_guard g(s.mu);
    if (!on() || !s.fd.valid()) {
        return;
    }
    struct stat st {};
    if (::fstat(s.fd.get(), &st) != 0) {
        stop(s, std::string("cannot stat: ") + std::strerror(errno));
        return;
    }
    if (S_ISREG(st.st_mode) &&
        static_cast<std::uint64_t>(st.st_size) + record.size() > s.max_bytes) {
        stop(s, "reached its size bound of " + std::to_string(s.max_bytes) +
                    " bytes (KCACHE_TRACE_MAX_SIZE)");
        return;
    }
    // One write: O_APPEND places it whole after every other process's record.
    const ssize_t n = ::write(s.fd.get(), record.data(), record.size());
    if (n != static_cast<ssize_t>(record.size())) {
        stop(s, n < 0 ? std::string("cannot write: ") + std::strerror(errno)
                      : "the file took part of a record (full?)");
    }
}

}  // namespace kcache::trace
