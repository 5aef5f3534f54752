#pragma once
// The typed error of the canary's and the errata's public functions.

#include <string>

namespace kcache::canary {

enum class CanaryErrc {
    damaged,  // a record, an errata document or one of their fields is wrong
    io,       // a file, directory or lock could not be read or written
    refused,  // a signature, the signature policy or the feed's order refused it
    remote,   // the remote tier failed or refused its object
    no_test,  // no known-answer test checks this binary
};

struct CanaryError {
    CanaryErrc code;
    std::string message;  // names the file, erratum or field, as people read it
};

}  // namespace kcache::canary
