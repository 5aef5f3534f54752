#pragma once
// The URL schemes the remote tier can use: those of the one backend table
// (remote/src/backends.cpp), so that settings are checked against the
// backends that exist.

#include <string>
#include <vector>

namespace kcache::remote {

// The supported schemes in table order ("http", "https").
std::vector<std::string> supported_schemes();

// The supported schemes written as URL starts: "http://, https://".
std::string supported_scheme_list();

// True when `url` starts with "<scheme>://" for a supported scheme.
bool scheme_supported(const std::string& url);

}  // namespace kcache::remote
