#pragma once
// kcache errata export (cmd_errata_export.cpp), run by the errata command.

#include "args.hpp"
#include "kcache/service/service_api.hpp"

namespace kcache::cli {

// `kcache errata export FILE|--pack PACK …` with `config`; the exit code.
int run_export(const ParsedArgs& args, const Config& config);

}  // namespace kcache::cli
