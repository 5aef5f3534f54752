#pragma once
// Text that came from outside (config lines, environment values, paths) made
// safe to show on a terminal.

#include <string>
#include <string_view>

namespace kcache::service {

// Returns `text` with control bytes (except newline and tab), DEL and bytes
// that are not part of valid UTF-8 written as "\xNN", so that echoing a
// hostile value cannot move the cursor, recolour or retitle a terminal.
std::string printable(std::string_view text);

}  // namespace kcache::service
