#pragma once
// What the C API's files share: the handle behind kcache_cache, each thread's
// last message, and the readers of the caller's extensible structs.

#include <cstddef>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>

#include "kcache/kcache.h"
#include "kcache/service/service_api.hpp"

struct kcache_cache {
    std::unique_ptr<kcache::Cache> cache;
};

struct kcache_config {
    kcache::Config config;
};

struct kcache_outcome {
    kcache::Outcome outcome;
};

namespace kcache::c_api {

// What a source request's input lacks ("" when it is whole): its `source`,
// or with `il_size` a SPIR-V module at `il` (no link units then), and its
// entry points when it counts some.
inline std::string missing_input(const kcache_source_request& r) {
    if (r.il_size != 0 && (r.il == nullptr || r.n_link_units != 0 ||
                           !is_spirv_module({static_cast<const char*>(r.il), r.il_size}))) {
        return "request->il is not a SPIR-V module (header, whole words, magic number "
               "little-endian), or comes with link units";
    }
    if ((r.source == nullptr && r.il_size == 0) ||
        (r.n_entry_points > 0 && r.entry_points == nullptr)) {
        return "request->source (and entry_points when n_entry_points > 0) must not be NULL";
    }
    return {};
}
// The text or module a whole source request builds.
inline std::string input_of(const kcache_source_request& r) {
    return r.il_size != 0 ? std::string(static_cast<const char*>(r.il), r.il_size)
                          : std::string(r.source);
}

// Sets this thread's last message ("" for ok) and returns `s` as a C status.
kcache_status report(StatusCode s, const std::string& message);
// KCACHE_STATUS_INVALID_ARGUMENT with `what` as the message.
kcache_status invalid(const std::string& what);
// Inside a catch block: KCACHE_STATUS_INTERNAL_ERROR naming `function` and
// the exception's text.
kcache_status escaped(const char* function);

// A new C outcome holding `o`, or nullptr when it cannot be allocated.
kcache_outcome* new_outcome(Outcome o) noexcept;
// Hands `o` to the caller's `*out` (`out` may be NULL: nothing) and returns
// its status, with its message as this thread's last.
kcache_status answer(Outcome o, kcache_outcome** out);

// A C caller may pass any int where a kcache enum is declared; C++ may not
// even load a value outside the enumerators' range, so the argument's bytes
// are read as its integer.
template <class E>
long long value_of(const E& e) {
    std::underlying_type_t<E> v;
    std::memcpy(&v, &e, sizeof v);
    return static_cast<long long>(v);
}

// The end of `member` in `type` (offsetof + sizeof): a caller's struct of
// `struct_size` bytes has the member when struct_size is at least this.
#define KCACHE_END(type, member) (offsetof(type, member) + sizeof(type::member))

// The largest `struct_size` taken as meant (a struct of this library's era
// is a few dozen bytes; a bigger size is garbage, not a newer caller).
inline constexpr std::size_t kMaxStructSize = std::size_t{1} << 16;

// Copies the caller's request `in` (its first in->struct_size bytes) into
// `out`, a zeroed T: fields past a shorter struct keep their zero default.
// Returns an empty string, or why the request is refused: NULL, a
// struct_size below `required` (the end of the last required field) or
// above kMaxStructSize, or a longer struct whose bytes unknown to this
// library are not all zero (a newer caller asked for something it cannot do).
template <class T>
std::string read_request(const T* in, std::size_t required, T& out) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (in == nullptr) {
        return "request is NULL";
    }
    const std::size_t size = in->struct_size;
    if (size < required || size > kMaxStructSize) {
        return "request->struct_size is " + std::to_string(size) + " (set it with the _INIT macro)";
    }
    std::memset(&out, 0, sizeof out);
    std::memcpy(&out, in, size < sizeof out ? size : sizeof out);
    const auto* bytes = reinterpret_cast<const unsigned char*>(in);
    for (std::size_t i = sizeof out; i < size; ++i) {
        if (bytes[i] != 0) {
            return "request sets a field this library (kcache " KCACHE_VERSION_STRING
                   ") does not know, at byte " +
                   std::to_string(i);
        }
    }
    return {};
}

}  // namespace kcache::c_api
