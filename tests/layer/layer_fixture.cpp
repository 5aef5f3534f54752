#include "layer_fixture.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace kcache::test {

compiler::RunResult LayerTest::run(With with, const std::string& program,
                                   const std::vector<std::string>& args,
                                   const std::vector<std::string>& env) {
    compiler::SpawnSpec spec;
    spec.program = with == With::layer ? KCACHE_TEST_CLI_PATH : program;
    if (with == With::layer) {
        spec.args = {"run", "--", program};
    }
    spec.args.insert(spec.args.end(), args.begin(), args.end());
    spec.working_dir = dir().string();  // what applications write lands here
    spec.env_overrides = {"KCACHE_DIR=" + store_dir().string(),
                          "POCL_CACHE_DIR=" + (dir() / "pocl").string(),
                          "POCL_KERNEL_CACHE=0",
                          "XDG_CACHE_HOME=" + (dir() / "xdg").string(),
                          "KCACHE_TRACE=1",
                          "KCACHE_LAYER_PATH=" KCACHE_TEST_LAYER_PATH};
    for (const std::string& e : env) {
        const std::string name = e.substr(0, e.find('=') + 1);
        std::erase_if(spec.env_overrides,
                      [&](const std::string& o) { return o.rfind(name, 0) == 0; });
        spec.env_overrides.push_back(e);
    }
    auto result = compiler::run(spec, compiler::Clock::now() + std::chrono::minutes(3));
    EXPECT_EQ(result.outcome, compiler::ChildExit::exited)
        << program << " did not exit: " << compiler::to_string(result.outcome) << "\n"
        << result.err;
    return result;
}

std::vector<std::string> LayerTest::trace_lines(const std::string& err) {
    constexpr std::string_view kPrefix = "kcache layer: ";
    std::vector<std::string> lines;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(kPrefix, 0) == 0) {
            lines.push_back(line.substr(kPrefix.size()));
        }
    }
    return lines;
}

std::string LayerTest::value_of(const std::string& out, const std::string& name) {
    const std::string mark = name + "=";
    const auto at = out.rfind("\n" + mark);
    const auto start = out.rfind(mark, 0) == 0 ? 0 : at == std::string::npos ? at : at + 1;
    if (start == std::string::npos) {
        return "";
    }
    const auto begin = start + mark.size();
    return out.substr(begin, out.find('\n', begin) - begin);
}

std::string LayerTest::counters() const {
    std::ifstream in(store_dir() / "layer-counters");
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<int> LayerTest::processes_of_this_store() const {
    const std::string mark = "KCACHE_DIR=" + store_dir().string();
    std::vector<int> pids;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) {
            continue;
        }
        std::ifstream in(e.path() / "environ", std::ios::binary);
        std::string environ((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::istringstream vars(environ);
        for (std::string var; std::getline(vars, var, '\0');) {
            if (var == mark) {
                pids.push_back(std::stoi(name));
                break;
            }
        }
    }
    return pids;
}

}  // namespace kcache::test
