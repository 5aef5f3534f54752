#pragma once
// A fresh temporary directory per test, removed after a passing test and kept
// (its path printed) after a failing one so the evidence can be inspected.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "temp_path.hpp"

namespace kcache::test {

class TempDirTest : public ::testing::Test {
  protected:
    void SetUp() override;
    void TearDown() override;
    // The test's own directory; exists for the whole test.
    const std::filesystem::path& dir() const { return dir_; }

  private:
    std::filesystem::path dir_;
};

}  // namespace kcache::test
