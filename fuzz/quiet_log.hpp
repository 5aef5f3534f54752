#pragma once
// For the harnesses of code that reports through the process log (the
// store's and the pack reader's warnings about damaged files): left alone,
// nearly every input would print.

#include <string_view>

#include "kcache/common/log.hpp"

namespace kcache::fuzz {

// Sends the process log nowhere; the first call of the process does it.
inline void silence_log() {
    static const bool silenced = (logging::set_sink([](logging::Level, std::string_view) {}), true);
    (void)silenced;
}

}  // namespace kcache::fuzz
