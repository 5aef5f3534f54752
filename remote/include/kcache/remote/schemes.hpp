#pragma once
// The URL schemes the remote tier can use: those of the one backend table
// (remote/src/backends.cpp), so that settings are checked against the
// backends that exist.

#include <string>
#include <utility>
#include <vector>

#include "kcache/remote/remote.hpp"

namespace kcache::remote {

// The supported schemes in table order ("http", "https").
std::vector<std::string> supported_schemes();

// The supported schemes written as URL starts: "http://, https://".
std::string supported_scheme_list();

// True when `url` starts with "<scheme>://" for a supported scheme.
bool scheme_supported(const std::string& url);

// `url` without its attributes (the text after '?', which its backend reads:
// `s3://bucket/prefix?region=eu-west-1`), and the attributes ("" for none).
std::pair<std::string, std::string> split_attributes(const std::string& url);

// Nothing when `url` is a base URL of a supported scheme whose attributes
// its backend takes; otherwise a config error that says what to change.
Status<RemoteError> check_base_url(const std::string& url);

}  // namespace kcache::remote
