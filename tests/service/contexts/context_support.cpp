#include "context_support.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace kcache::test {
namespace {

void CL_CALLBACK count_destruction(cl_context, void* counter) {
    static_cast<std::atomic<int>*>(counter)->fetch_add(1);
}

}  // namespace

cl_context watched_context(cl_device_id device, std::atomic<int>& destroyed) {
    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &err);
    EXPECT_EQ(err, CL_SUCCESS);
    if (ctx == nullptr) {
        return nullptr;
    }
    EXPECT_EQ(clSetContextDestructorCallback(ctx, count_destruction, &destroyed), CL_SUCCESS);
    return ctx;
}

bool destroyed_within(const std::atomic<int>& destroyed, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (destroyed.load() == 0 && std::chrono::steady_clock::now() < end) {
        ::usleep(1000);
    }
    return destroyed.load() == 1;
}

std::uint64_t resident_kib() {
    std::ifstream statm("/proc/self/statm");
    std::uint64_t size = 0, resident = 0;
    if (!(statm >> size >> resident)) {
        return 0;
    }
    return resident * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE)) / 1024;
}

}  // namespace kcache::test
