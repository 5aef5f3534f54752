#pragma once
// The compile input the cache makes for a registry kernel's default variant,
// for tests that store entries under the keys the ladder looks up.

#include <gtest/gtest.h>

#include <string>

#include "kcache/kernels/registry.hpp"
#include "kcache/service/keys.hpp"

namespace kcache::test {

inline device_db::CompileInput registry_input(const std::string& kernel) {
    auto v = kernels::make_variant(kernel, {});
    EXPECT_TRUE(v);
    auto r = kernels::render(*v);
    EXPECT_TRUE(r);
    return {v->id(), r->source, r->options, r->entry_points};
}

}  // namespace kcache::test
