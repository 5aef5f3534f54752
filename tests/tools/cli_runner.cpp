#include "cli_runner.hpp"

#include <algorithm>

#include "kcache/compiler/subprocess.hpp"

namespace kcache::test {

nlohmann::json CliRun::json() const {
    try {
        return nlohmann::json::parse(out);
    } catch (const nlohmann::json::exception& e) {
        ADD_FAILURE() << "stdout is not JSON (" << e.what() << "):\n" << out;
        return {};
    }
}

CliRun CliTest::kcache(const std::vector<std::string>& args, const std::vector<std::string>& env) {
    compiler::SpawnSpec spec;
    spec.program = KCACHE_TEST_CLI_PATH;
    spec.args = args;
    spec.env_overrides = env;
    // Defaults for the variables `env` does not set itself.
    for (std::string var :
         {"KCACHE_DIR=" + store_dir().string(), "POCL_CACHE_DIR=" + (dir() / "pocl").string(),
          "XDG_CACHE_HOME=" + (dir() / "xdg").string()}) {
        const std::string name = var.substr(0, var.find('=') + 1);
        const bool overridden = std::any_of(
            env.begin(), env.end(), [&](const std::string& e) { return e.rfind(name, 0) == 0; });
        if (!overridden) {
            spec.env_overrides.push_back(std::move(var));
        }
    }
    // A generous bound: a hung kcache fails the test instead of hanging the suite.
    const auto result = compiler::run(spec, compiler::Clock::now() + std::chrono::minutes(3));
    EXPECT_EQ(result.outcome, compiler::ChildExit::exited)
        << "kcache did not exit: " << compiler::to_string(result.outcome) << "\n"
        << result.err;
    return {result.outcome == compiler::ChildExit::exited ? result.exit_code : -1, result.out,
            result.err};
}

}  // namespace kcache::test
