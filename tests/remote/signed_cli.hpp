#pragma once
// The base of the remote tier's CLI tests: kcache runs with the test signing
// key (it signs uploads and is trusted), as a fleet's writers do. A test
// that wants a node without a key calls CliTest::kcache.

#include <string>
#include <utility>
#include <vector>

#include "cli_runner.hpp"
#include "remote_support.hpp"

namespace kcache::test {

class SignedCliTest : public CliTest {
  protected:
    CliRun kcache(const std::vector<std::string>& args, std::vector<std::string> env = {}) {
        for (std::string& e : signing_env(dir() / "keys")) {
            env.push_back(std::move(e));
        }
        return CliTest::kcache(args, env);
    }
};

}  // namespace kcache::test
