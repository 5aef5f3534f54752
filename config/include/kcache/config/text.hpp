#pragma once
// Text that came from outside (config lines, environment values, paths) made
// safe to show on a terminal.

#include <string>
#include <string_view>

namespace kcache::service {

// Returns `text` with control characters (C0 except newline and tab, DEL,
// C1), invisible ones (zero-width and direction marks, bidi overrides and
// isolates, line separators, the byte-order mark) and bytes that are not part
// of valid UTF-8 written as "\xNN" per byte, so that echoing a hostile value
// cannot move the cursor, recolour or retitle a terminal, or hide or reorder
// what is shown.
std::string printable(std::string_view text);

}  // namespace kcache::service
