#pragma once
// What the pooled-helper tests share (jit_pool_test.cpp,
// jit_pool_lifetime_test.cpp): a test directory, this process's PoCL cache
// kept private, and JitConfigs for kcache-jit with a pool.

#include <chrono>
#include <cstddef>
#include <filesystem>

#include "jit_support.hpp"
#include "temp_dir.hpp"

namespace kcache::compiler {

// A JitConfig for kcache-jit with a pool of `size` helpers that exit after
// `idle`, whose PoCL kernel cache is under `dir`.
inline JitConfig pooled_config(const std::filesystem::path& dir, std::size_t size,
                               std::chrono::milliseconds idle = std::chrono::seconds(60)) {
    JitConfig c{test::jit_helper_path(), {"POCL_CACHE_DIR=" + (dir / "pocl").string()}, {}};
    c.pool_size = size;
    c.idle_timeout = idle;
    return c;
}

class PoolTest : public test::TempDirTest {
  protected:
    void SetUp() override {
        TempDirTest::SetUp();
        test::use_private_pocl_cache();
    }
    JitConfig pooled(std::size_t size,
                     std::chrono::milliseconds idle = std::chrono::seconds(60)) const {
        return pooled_config(dir(), size, idle);
    }
};

using CompilerJitPool = PoolTest;

}  // namespace kcache::compiler
