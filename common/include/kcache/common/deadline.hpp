#pragma once
// The one way to turn a time budget into a deadline: `now + budget` that
// saturates instead of overflowing, so a huge budget (a caller's
// milliseconds::max(), a "100 years" flag) means "no practical limit" and
// never wraps into an instant timeout.

#include <chrono>

namespace kcache {

// Headroom left below the clock's maximum, so that code adding a grace
// period to a saturated deadline does not overflow either.
inline constexpr std::chrono::hours kDeadlineHeadroom{24 * 365};

// Returns `now + budget`, or the latest representable time point less
// kDeadlineHeadroom when the sum would exceed it; a negative budget gives `now`.
template <class Clock, class Rep, class Period>
typename Clock::time_point deadline_after(typename Clock::time_point now,
                                          std::chrono::duration<Rep, Period> budget) {
    using Tp = typename Clock::time_point;
    using D = typename Clock::duration;
    if (budget <= budget.zero()) {
        return now;
    }
    const Tp latest = Tp::max() - std::chrono::duration_cast<D>(kDeadlineHeadroom);
    if (now >= latest) {
        return latest;
    }
    const D room = latest - now;
    // Compare in the budget's own unit, rounded down, so the comparison cannot overflow.
    const auto room_in_budget_units =
        std::chrono::duration_cast<std::chrono::duration<Rep, Period>>(room);
    if (budget >= room_in_budget_units) {
        return latest;
    }
    return now + std::chrono::duration_cast<D>(budget);
}

// Returns deadline_after(Clock::now(), `budget`) on the steady clock.
template <class Rep, class Period>
std::chrono::steady_clock::time_point deadline_after(std::chrono::duration<Rep, Period> budget) {
    return deadline_after<std::chrono::steady_clock>(std::chrono::steady_clock::now(), budget);
}

}  // namespace kcache
