#include "pooled_helper.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "kcache/compiler/jit_protocol.hpp"

namespace kcache::compiler {
namespace {

constexpr std::size_t kErrTail = 64u << 10;

int poll_ms(Clock::time_point deadline, bool have_pidfd) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    // Without a pidfd a death is only noticed by polling.
    return static_cast<int>(std::clamp<long long>(left.count(), 0, have_pidfd ? 1000 : 10));
}

// Appends what `fd` has now to `sink`; false at end of file or on an error.
bool read_some(int fd, std::string& sink) {
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            sink.append(buf, static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
    }
}

// Where a reply frame in `buf` stands.
enum class FrameState { partial, complete, bad };

FrameState frame_state(const std::string& buf, std::string& problem) {
    if (buf.size() < kFrameHeaderSize) {
        return FrameState::partial;
    }
    auto length = check_reply_header(buf);
    if (!length) {
        problem = length.error().message;
        return FrameState::bad;
    }
    const std::uint64_t total = kFrameHeaderSize + *length;
    if (buf.size() < total) {
        return FrameState::partial;
    }
    if (buf.size() > total) {
        problem = "trailing bytes after the reply frame";
        return FrameState::bad;
    }
    return FrameState::complete;
}

// One round of the exchange's I/O after poll() said what is ready (`fds`:
// reply, stderr, request, exit): keeps the tail of stderr, sends more of
// `frame` from `sent`, reads more of the reply; false once the reply's end
// is closed.
bool pump(Spawned& proc, const pollfd (&fds)[4], const std::string& frame, std::size_t& sent,
          Exchange& ex) {
    if (fds[1].revents && !read_some(proc.err.get(), ex.err)) {
        proc.err.reset();
    }
    if (ex.err.size() > 2 * kErrTail) {
        ex.err.erase(0, ex.err.size() - kErrTail);
    }
    if (fds[2].revents) {
        const ssize_t n = ::send(proc.in.get(), frame.data() + sent, frame.size() - sent,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            sent += static_cast<std::size_t>(n);
        } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            sent = frame.size();  // the helper stopped reading: its death shows below
        }
    }
    return !(fds[0].revents && !read_some(proc.out.get(), ex.reply));
}

}  // namespace

Result<PooledHelper, int> PooledHelper::start(const SpawnSpec& spec) {
    SpawnSpec serve = spec;
    serve.args = {"--serve"};
    auto spawned = spawn(serve);
    if (!spawned) {
        return fail(spawned.error());
    }
    return PooledHelper(std::move(*spawned));
}

Exchange PooledHelper::exchange(const std::string& frame, Clock::time_point deadline) {
    Exchange ex;
    ex.sent = Clock::now();
    ++served_;
    std::size_t sent = 0;
    bool out_open = true;
    const bool have_pidfd = proc_.exited.valid();
    for (;;) {
        if (Clock::now() >= deadline) {
            proc_.child.kill_group();
            ex.end = ExchangeEnd::timed_out;
            break;
        }
        pollfd fds[4] = {
            {out_open ? proc_.out.get() : -1, POLLIN, 0},
            {proc_.err.valid() ? proc_.err.get() : -1, POLLIN, 0},
            {sent < frame.size() ? proc_.in.get() : -1, POLLOUT, 0},
            {have_pidfd ? proc_.exited.get() : -1, POLLIN, 0},
        };
        if (::poll(fds, 4, poll_ms(deadline, have_pidfd)) < 0 && errno != EINTR) {
            proc_.child.kill_group();
            ex.end = ExchangeEnd::died;
            break;
        }
        out_open = pump(proc_, fds, frame, sent, ex) && out_open;
        const FrameState state = frame_state(ex.reply, ex.problem);
        if (state == FrameState::complete) {
            ex.end = ExchangeEnd::reply;
            break;
        }
        if (state == FrameState::bad) {
            proc_.child.kill_group();
            ex.end = ExchangeEnd::bad_frame;
            break;
        }
        if (auto status = proc_.child.peek_exit()) {
            if (proc_.err.valid()) {
                (void)read_some(proc_.err.get(), ex.err);
            }
            ex.status = *status;
            ex.end = ExchangeEnd::died;
            break;
        }
    }
    ex.done = Clock::now();
    return ex;
}

void PooledHelper::retire() {
    proc_.in.reset();
    proc_.child.kill_group();
    reap_later(std::move(proc_.child));
}

}  // namespace kcache::compiler
