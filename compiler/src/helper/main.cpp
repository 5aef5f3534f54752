// kcache-jit: the helper process behind JitCompiler (docs/design.md, "The
// watchdog"). Usage:
//   kcache-jit                           one request frame on stdin, one reply on stdout
//   kcache-jit --serve                   pooled: a reply per request until stdin ends,
//                                        keeping the platform and context between them
//                                        (two for a request with warm_after_reply)
//   kcache-jit --exec-guard -- PROG ARGS  die with the parent, then exec PROG (for ocloc)
// Exit codes: 0 reply ok (--serve: stdin ended), 1 reply with an error
// status, 2 bad request, 64 usage, 70 parent already gone, 127 exec failed.

#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <mutex>
#include <string>

#include "helper.hpp"
#include "kcache/common/fd_io.hpp"
#include "kcache/compiler/subprocess.hpp"

namespace {

using namespace kcache::compiler;

// PR_SET_PDEATHSIG, then the check that closes the race with a parent that
// died before prctl ran: we would already be orphaned (reparented).
// The parent's pid comes in the environment, not as an argument or through
// Config: it is not a setting but the watchdog runner's contract with every
// child it starts (compiler/src/subprocess.cpp adds it to each child's
// environment), and the runner starts programs whose command lines have no
// room for it (kcache-verify; the --exec-guard form passes its argv on to
// ocloc). Only the executables read it (this one and kcache-verify); no
// library does.
void die_with_parent() {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const char* expected = std::getenv(kParentPidEnv);
    if (expected && std::strtol(expected, nullptr, 10) != static_cast<long>(::getppid())) {
        ::_exit(70);
    }
}

int exec_guard(int argc, char** argv) {
    if (argc < 4 || std::strcmp(argv[2], "--") != 0) {
        std::fprintf(stderr, "usage: kcache-jit --exec-guard -- PROGRAM [ARGS...]\n");
        return 64;
    }
    die_with_parent();
    ::execv(argv[3], argv + 3);
    std::fprintf(stderr, "kcache-jit: cannot exec %s: %s\n", argv[3], std::strerror(errno));
    return 127;
}

// Reads exactly `n` bytes unless EOF comes first; returns what was read.
std::string read_exactly(int fd, std::size_t n) {
    std::string s(n, '\0');
    std::size_t got = 0;
    while (got < n) {
        const ssize_t r = ::read(fd, s.data() + got, n - got);
        if (r > 0) {
            got += static_cast<std::size_t>(r);
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else {
            break;
        }
    }
    s.resize(got);
    return s;
}

// Now on CLOCK_MONOTONIC in nanoseconds (the parent's steady_clock).
std::uint64_t monotonic_ns() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

struct Job {
    helper::Session* session;
    const JitRequest* request;
    JitReply reply;
};

// The thread builds run on, with the stack a request asks for: LLVM recurses
// deeply on legal kernels and overflows the default 8 MiB. A pooled helper
// keeps it between requests, so that each build finds its thread as an
// in-process build finds the application's (stack pages already mapped, the
// driver's per-thread state already made); a request for another stack size
// gets a new thread. A build that overflows even this stack crashes the
// helper, which the parent reports as a crash.
class BuildThread {
  public:
    explicit BuildThread(std::uint64_t stack_bytes) : stack_bytes_(stack_bytes) {}
    BuildThread(const BuildThread&) = delete;
    BuildThread& operator=(const BuildThread&) = delete;
    ~BuildThread() {
        if (started_) {
            {
                std::lock_guard l(mu_);
                stopping_ = true;
            }
            cv_.notify_all();
            pthread_join(thread_, nullptr);
        }
    }

    std::uint64_t stack_bytes() const { return stack_bytes_; }

    // Serves `job` on the thread (started on first use); "" or why the
    // thread could not be started.
    std::string run(Job& job) {
        if (!started_) {
            pthread_attr_t attr;
            pthread_attr_init(&attr);
            int rc = pthread_attr_setstacksize(&attr, stack_bytes_);
            rc = rc ? rc : pthread_create(&thread_, &attr, &BuildThread::loop, this);
            pthread_attr_destroy(&attr);
            if (rc != 0) {
                return std::strerror(rc);
            }
            started_ = true;
        }
        {
            std::lock_guard l(mu_);
            job_ = &job;
        }
        cv_.notify_all();
        std::unique_lock l(mu_);
        cv_.wait(l, [&] { return job_ == nullptr; });
        return "";
    }

  private:
    static void* loop(void* arg) {
        auto* self = static_cast<BuildThread*>(arg);
        std::unique_lock l(self->mu_);
        for (;;) {
            self->cv_.wait(l, [&] { return self->job_ != nullptr || self->stopping_; });
            if (self->job_ == nullptr) {
                return nullptr;  // stopping
            }
            Job* job = self->job_;
            l.unlock();
            job->reply = job->session->serve(*job->request);
            l.lock();
            self->job_ = nullptr;
            self->cv_.notify_all();
        }
    }

    const std::uint64_t stack_bytes_;
    pthread_t thread_{};
    bool started_ = false;
    std::mutex mu_;  // guards job_ and stopping_
    std::condition_variable cv_;
    Job* job_ = nullptr;
    bool stopping_ = false;
};

// Serves `request` on the build thread, made for its stack size.
JitReply serve_on_build_thread(std::unique_ptr<BuildThread>& builder, helper::Session& session,
                               const JitRequest& request) {
    if (!builder || builder->stack_bytes() != request.build_stack_bytes) {
        builder.reset();  // joins the former thread first
        builder = std::make_unique<BuildThread>(request.build_stack_bytes);
    }
    Job job{&session, &request, {}};
    if (std::string error = builder->run(job); !error.empty()) {
        builder.reset();
        job.reply.status = ReplyStatus::driver_error;
        job.reply.message = "cannot start the build thread: " + error;
    }
    return std::move(job.reply);
}

void send_reply(int reply_fd, JitReply reply, std::uint64_t served, const HelperStamps& stamps) {
    reply.helper_pid = static_cast<std::uint32_t>(::getpid());
    reply.served = served;
    reply.stamps = stamps;
    reply.stamps.reply_ns = monotonic_ns();
    const std::string frame = encode_reply(reply);
    (void)kcache::write_all(reply_fd, frame.data(), frame.size());  // a parent gone reads nothing
}

// Answers one request read from fd 0 on `reply_fd` (a pooled helper asked
// for the warm-up after the reply answers twice) and returns the exit code
// a one-shot helper ends with. Sets `eof` when no further request can be
// read: stdin ended (a pooled helper then exits quietly) or a bad frame put
// the stream out of step.
int answer_one(helper::Session& session, std::unique_ptr<BuildThread>& builder, int reply_fd,
               std::uint64_t served, const HelperStamps& base, bool pooled, bool& eof) {
    HelperStamps stamps = base;
    std::string header = read_exactly(0, kFrameHeaderSize);
    eof = header.empty();
    if (eof && pooled) {
        return 0;
    }
    auto length = check_request_header(header);
    auto request = length ? decode_request(header + read_exactly(0, *length))
                          : kcache::Result<JitRequest, CompilerError>(kcache::fail(length.error()));
    stamps.request_ns = monotonic_ns();
    if (request && !pooled) {
        request->warm_after_reply = false;  // a one-shot helper answers once
    }
    JitReply reply;
    if (!request) {
        reply.status = ReplyStatus::bad_request;
        reply.message = request.error().message;
    } else if (const rlimit cap{request->address_space_cap, request->address_space_cap};
               request->address_space_cap > 0 && ::setrlimit(RLIMIT_AS, &cap) != 0) {
        reply.status = ReplyStatus::driver_error;
        reply.message = std::string("cannot set the address-space cap: ") + std::strerror(errno);
    } else {
        reply = serve_on_build_thread(builder, session, *request);
    }
    const int code = !request ? 2 : reply.status == ReplyStatus::ok ? 0 : 1;
    const bool warm_pending = reply.warm_pending;
    send_reply(reply_fd, std::move(reply), served, stamps);
    if (warm_pending) {
        // The second reply: the same request built again with its warm-up
        // before the binary is taken (PoCL fixes a program's binary when it
        // is first taken, so the answered program cannot be warmed into it).
        // The driver's own cache makes this build short.
        JitRequest warm = *request;
        warm.warm_after_reply = false;
        stamps.request_ns = monotonic_ns();
        send_reply(reply_fd, serve_on_build_thread(builder, session, warm), served, stamps);
    }
    eof = eof || !request;
    return code;
}

}  // namespace

int main(int argc, char** argv) {
    HelperStamps stamps;
    stamps.started_ns = monotonic_ns();
    if (argc >= 2 && std::strcmp(argv[1], "--exec-guard") == 0) {
        return exec_guard(argc, argv);
    }
    const bool pooled = argc == 2 && std::strcmp(argv[1], "--serve") == 0;
    if (argc != 1 && !pooled) {
        std::fprintf(stderr, "usage: kcache-jit [--serve] < request-frames > reply-frames\n");
        return 64;
    }
    die_with_parent();
    // The reply gets a private descriptor; fd 1 then points at stderr so that
    // a driver printing to stdout cannot corrupt the frame.
    const int reply_fd = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
    ::dup2(2, 1);
    helper::Session session;
    std::unique_ptr<BuildThread> builder;
    int code = 0;
    bool eof = false;
    for (std::uint64_t served = 1; !eof; ++served) {
        code = answer_one(session, builder, reply_fd, served, stamps, pooled, eof);
        if (!pooled) {
            break;
        }
    }
    // The reply is out; skip the driver's teardown (LLVM's static destructors
    // and PoCL's shutdown cost tens of milliseconds and can only fail).
    ::_exit(code);
}
