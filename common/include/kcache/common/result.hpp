#pragma once
// Result<T, E>: a value or a typed error, the return type of every low layer
// (STYLE.md "Errors as values low, status at the edge"). A small stand-in for
// C++23 std::expected; accessing the wrong alternative is a programming error
// and aborts via assert in debug builds.

#include <cassert>
#include <utility>
#include <variant>

namespace kcache {

// Wraps an error value so that Result<E, E> stays unambiguous.
template <class E>
struct Unexpected {
    E error;
};

template <class E>
Unexpected<std::decay_t<E>> fail(E&& e) {
    return {std::forward<E>(e)};
}

template <class T, class E>
class [[nodiscard]] Result {
  public:
    Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
    template <class G>
    Result(Unexpected<G> u) : v_(std::in_place_index<1>, E(std::move(u.error))) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }

    T& value() & {
        assert(ok());
        return std::get<0>(v_);
    }
    const T& value() const& {
        assert(ok());
        return std::get<0>(v_);
    }
    T&& value() && {
        assert(ok());
        return std::get<0>(std::move(v_));
    }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

    const E& error() const {
        assert(!ok());
        return std::get<1>(v_);
    }

  private:
    std::variant<T, E> v_;
};

// Result of an operation that yields nothing but may fail.
struct Ok {};

template <class E>
using Status = Result<Ok, E>;

}  // namespace kcache
