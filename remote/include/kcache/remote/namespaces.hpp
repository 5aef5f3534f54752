#pragma once
// Namespaces of the remote tier (docs/remote.md, "Namespaces"): teams that
// share one server without vouching for each other's builds. A namespace's
// objects live under a prefix of their own, beside the default layout and
// never inside it:
//
//   list     := name ("," name)*          ; KCACHE_REMOTE_NAMESPACE; the first is the own
//   name     := [a-z0-9] [a-z0-9._-]{0,62} ; and no ".."
//   default  := "kcache/v1/" <2 hex> "/" <64 hex>
//   in name  := "kcache/ns/" name "/v1/" <2 hex> "/" <64 hex>
//
// Each namespace has its own trusted keys (trust_dirs): an object read from
// a namespace is used only when a key trusted for that namespace signed it.

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "kcache/common/result.hpp"
#include "kcache/remote/remote.hpp"
#include "kcache/store/types.hpp"

namespace kcache::remote {

// What is wrong with `name` as a namespace name; "" when it is one.
std::string namespace_problem(std::string_view name);

// The names of `list` (comma-separated; blanks around a name dropped), the
// own first; otherwise a `config` error saying what is wrong (a bad or empty
// name, a name given twice). An empty or blank `list`: no namespaces (the
// default layout).
Result<std::vector<std::string>, RemoteError> parse_namespaces(std::string_view list);

// The directory of namespace `name`'s objects, relative to a base URL and
// ending in '/': "kcache/ns/<name>/v1/"; for "" the default layout's "kcache/v1/".
std::string namespace_dir(std::string_view name);

// The object path of `key` in namespace `name` ("" : the default layout's,
// object_path(key)).
std::string object_path_in(std::string_view name, const store::Key& key);

// The directories whose *.pub keys are trusted for namespace `name`:
// "<dir>/namespaces/<name>" for each trusted.d directory of `trusted_dirs`.
std::vector<std::filesystem::path> namespace_trust_dirs(
    const std::vector<std::filesystem::path>& trusted_dirs, std::string_view name);

}  // namespace kcache::remote
