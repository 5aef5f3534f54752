#pragma once
// A measured value as short text for verdicts and logs ("%.6g": six
// significant digits), shared by the known-answer checks and kcache-verify.

#include <cstdio>
#include <string>

namespace kcache::cl {

inline std::string number_text(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.6g", v);
    return text;
}

}  // namespace kcache::cl
