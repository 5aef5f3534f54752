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
    return run_cli(KCACHE_TEST_CLI_PATH, args, env);
}

CliRun CliTest::kcache_to(const std::filesystem::path& out, const std::vector<std::string>& args,
                          const std::vector<std::string>& env) {
    std::vector<std::string> sh_args = {"-c", "exec \"$0\" \"$@\" > \"$KCACHE_TEST_STDOUT\"",
                                        KCACHE_TEST_CLI_PATH};
    sh_args.insert(sh_args.end(), args.begin(), args.end());
    std::vector<std::string> sh_env = env;
    sh_env.push_back("KCACHE_TEST_STDOUT=" + out.string());
    return run_cli("/bin/sh", sh_args, sh_env);
}

CliRun CliTest::run_cli(const std::string& program, const std::vector<std::string>& args,
                        const std::vector<std::string>& env) {
    compiler::SpawnSpec spec;
    spec.program = program;
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
    // A bound (generous by default): a hung kcache fails the test instead of hanging the suite.
    const auto result = compiler::run(spec, compiler::Clock::now() + cli_deadline_);
    EXPECT_EQ(result.outcome, compiler::ChildExit::exited)
        << "kcache did not exit: " << compiler::to_string(result.outcome) << "\n"
        << result.err;
    return {result.outcome == compiler::ChildExit::exited ? result.exit_code : -1, result.out,
            result.err};
}

}  // namespace kcache::test
