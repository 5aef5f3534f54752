// kcache-jit: the helper process behind JitCompiler (docs/design.md, "The
// watchdog"). Usage:
//   kcache-jit                           one request frame on stdin, one reply on stdout
//   kcache-jit --exec-guard -- PROG ARGS  die with the parent, then exec PROG (for ocloc)
// Exit codes: 0 reply ok, 1 reply with an error status, 2 bad request,
// 64 usage, 70 parent already gone, 127 exec failed.

#include <fcntl.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "helper.hpp"
#include "kcache/compiler/subprocess.hpp"

namespace {

using namespace kcache::compiler;

// PR_SET_PDEATHSIG, then the check that closes the race with a parent that
// died before prctl ran: we would already be orphaned (reparented).
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

kcache::Result<JitRequest, std::string> read_request(int fd) {
    std::string frame = read_exactly(fd, kFrameHeaderSize);
    auto length = check_request_header(frame);
    if (!length) {
        return kcache::fail(length.error());
    }
    frame += read_exactly(fd, *length);
    return decode_request(frame);
}

void write_all(int fd, const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (w > 0) {
            done += static_cast<std::size_t>(w);
        } else if (w < 0 && errno != EINTR) {
            return;
        }
    }
}

struct Job {
    const JitRequest* request;
    JitReply reply;
};

void* serve_job(void* arg) {
    auto* job = static_cast<Job*>(arg);
    job->reply = helper::serve(*job->request);
    return nullptr;
}

// Serves on a thread with the requested stack: LLVM recurses deeply on legal
// kernels and overflows the default 8 MiB.
JitReply serve_on_large_stack(const JitRequest& request) {
    Job job{&request, {}};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    int rc = pthread_attr_setstacksize(&attr, request.build_stack_bytes);
    pthread_t thread;
    rc = rc ? rc : pthread_create(&thread, &attr, serve_job, &job);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        job.reply.status = ReplyStatus::driver_error;
        job.reply.message = std::string("cannot start the build thread: ") + std::strerror(rc);
        return job.reply;
    }
    pthread_join(thread, nullptr);
    return std::move(job.reply);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && std::strcmp(argv[1], "--exec-guard") == 0) {
        return exec_guard(argc, argv);
    }
    if (argc != 1) {
        std::fprintf(stderr, "usage: kcache-jit < request-frame > reply-frame\n");
        return 64;
    }
    die_with_parent();
    // The reply gets a private descriptor; fd 1 then points at stderr so that
    // a driver printing to stdout cannot corrupt the frame.
    const int reply_fd = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
    ::dup2(2, 1);
    auto request = read_request(0);
    if (!request) {
        JitReply bad;
        bad.status = ReplyStatus::bad_request;
        bad.message = request.error();
        write_all(reply_fd, encode_reply(bad));
        return 2;
    }
    JitReply reply;
    const rlimit cap{request->address_space_cap, request->address_space_cap};
    if (request->address_space_cap > 0 && ::setrlimit(RLIMIT_AS, &cap) != 0) {
        reply.status = ReplyStatus::driver_error;
        reply.message = std::string("cannot set the address-space cap: ") + std::strerror(errno);
    } else {
        reply = serve_on_large_stack(*request);
    }
    write_all(reply_fd, encode_reply(reply));
    // The reply is out; skip the driver's teardown (LLVM's static destructors
    // and PoCL's shutdown cost tens of milliseconds and can only fail).
    ::_exit(reply.status == ReplyStatus::ok ? 0 : 1);
}
