#pragma once
// The check of binaries built elsewhere; declared with the headers the CLI
// shares (kcache pull checks what it stores the same way).
#include "kcache/canary/binary_vouch.hpp"
