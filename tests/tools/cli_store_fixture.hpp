#pragma once
// The fixture of CLI tests that need entries in the user store but no device:
// sample entries put straight into store_dir().

#include <gtest/gtest.h>

#include "cli_runner.hpp"
#include "kcache/store/store.hpp"
#include "store_fixture.hpp"

namespace kcache::test {

class CliStoreTest : public CliTest {
  protected:
    // Puts sample entries 0 … `n`-1 (4 KiB each) into the user store.
    void fill(int n) {
        auto store = ks::Store::open(store_dir());
        ASSERT_TRUE(store.ok());
        for (int i = 0; i < n; ++i) {
            ASSERT_TRUE(store->put(sample_fields(i), binary_like(4096, i), test_provenance()).ok());
        }
    }
};

}  // namespace kcache::test
