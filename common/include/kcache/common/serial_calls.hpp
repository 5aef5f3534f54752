#pragma once
// Program calls made one at a time in the process, for a driver that does
// not survive them at once (the device data's serialize_loads quirk: PoCL
// with its kernel cache off aborts when one thread releases a program while
// another loads the same binary, which the same threads building from
// source never do). Once a device that needs it is planned, kcache's loads
// of binaries and its releases of programs that may be the driver's last
// reference (the service's, the layer's) run under one lock.

#include <mutex>

namespace kcache::serial_calls {

// From now on (never off again in this process), hold() locks.
void turn_on() noexcept;
bool on() noexcept;

// The process's lock while on (an empty lock otherwise). Recursive, so a
// driver callback under it may make another such call; a forked child's
// lock is its own.
std::unique_lock<std::recursive_mutex> hold() noexcept;

}  // namespace kcache::serial_calls
