// clCompileProgram's input headers as the cache keys them: each header's
// name and source text, in the application's order. kcache-jit compiles the
// program with them as input headers, as the application's compile does, so
// the key holds them by name and content and nothing of where the store
// lives; the driver's own compile of the program, when one is needed, gets
// them as header programs again (separate.cpp).

#include <string>
#include <utility>
#include <vector>

#include "build.hpp"

namespace kcache::layer {

InputHeaders input_headers(cl_uint count, const cl_program* headers, const char** names,
                           std::string& why) {
    if (headers == nullptr || names == nullptr) {
        why = "input headers without their names";
        return {};
    }
    InputHeaders out;
    for (cl_uint i = 0; i < count; ++i) {
        LayerProgram* h = as_layer(headers[i]);
        if (h == nullptr || h->linked || h->from_il || names[i] == nullptr || names[i][0] == '\0') {
            why = "an input header not from source, or without a name";
            return {};
        }
        std::lock_guard lock(h->mutex);
        out.emplace_back(names[i], h->request.source.substr(0, h->source_size));
    }
    return out;
}

std::string headers_text(const InputHeaders& headers) {
    std::string text;
    for (const auto& [name, source] : headers) {
        text += "\n" + source;
    }
    return text;
}

}  // namespace kcache::layer
