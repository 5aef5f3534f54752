#pragma once
// Shared by the two ways a compile reaches a helper: a fresh helper per
// compile (jit_client.cpp) and the pool of persistent ones (jit_pool.cpp).

#include <optional>
#include <string>

#include "kcache/compiler/jit.hpp"

namespace kcache::compiler::detail {

// The last `n` bytes of `s`, for error messages.
std::string tail(const std::string& s, std::size_t n = 4000);

// A JitError of `kind`.
JitError compile_error(JitErrc kind, std::string message, std::string log = {});

// When one compile's steps happened, on the parent's clock.
struct ExchangeTimes {
    Clock::time_point asked;                   // compile() called
    std::optional<Clock::time_point> spawned;  // the helper started for this compile
    Clock::time_point sent;                    // the request started out
    Clock::time_point done;                    // the reply was in
};

// Turns a complete reply frame into the compile result; `err` is the
// helper's stderr (the log of a failure without a build log) and
// `exit_code` how a one-shot helper ended (-1: a pooled helper, still alive).
Result<JitResult, JitError> interpret_reply(const std::string& frame, const std::string& err,
                                            int exit_code, const ExchangeTimes& times);

// "kcache-jit died of signal 11 (Segmentation fault)" with its signal set.
JitError crash_error(int signal, const std::string& err);

}  // namespace kcache::compiler::detail
