#pragma once
// The typed error of the compiler's checks of frames, binaries and names.

#include <string>

namespace kcache::compiler {

enum class CompilerErrc {
    bad_frame,   // a kcache-jit frame's header or a field of its payload is wrong
    bad_binary,  // not a sound device ELF or ocloc fat binary
    bad_name,    // not an OpenCL C extension name
};

struct CompilerError {
    CompilerErrc code;
    std::string message;  // names the failed check or field
};

}  // namespace kcache::compiler
