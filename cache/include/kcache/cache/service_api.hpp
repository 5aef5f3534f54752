#pragma once
// The service's C++ API (Cache, Config, Outcome, load_config, …) as the
// library's own code, the CLI and the in-tree tools and tests use it. For now
// the declarations are those of the public <kcache/kcache.hpp>.

#include "kcache/kcache.hpp"
