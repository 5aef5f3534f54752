// kcache remote: the remote tier's own maintenance. `remote gc` lists one
// namespace's objects on every server (KCACHE_REMOTE) with their age and
// removes those older than a bound (remote::Client::gc); progress goes to
// stderr, the summary (or --json) to stdout.

#include <iostream>

#include "remote_cli.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

constexpr const char* kCommand = "remote";

json report_json(const remote::GcReport& r, const remote::GcRequest& request,
                 const std::vector<std::string>& base_urls) {
    json objects = json::array();
    for (const remote::GcItem& item : r.items) {
        json o = {{"url", remote::without_passwords(item.url, base_urls)},
                  {"age_s", item.age.count()},
                  {"outcome", remote::to_string(item.outcome)}};
        if (!item.error.empty()) {
            o["error"] = item.error;
        }
        objects.push_back(std::move(o));
    }
    return {{"namespace", request.name},
            {"older_than_s", request.older_than.count()},
            {"dry_run", request.mode == remote::GcMode::dry_run},
            {"listed", r.listed},
            {"old", r.old},
            {"removed", r.removed},
            {"failed", r.failed},
            {"objects", std::move(objects)}};
}

// The request of `args`, or a usage error.
Result<remote::GcRequest, std::string> gc_request(const ParsedArgs& args) {
    if (args.positionals().size() != 1 || args.positionals()[0] != "gc") {
        return fail(std::string("expected the action gc (kcache remote --help)"));
    }
    auto older = args.duration_value("older-than");
    if (!older) {
        return fail(older.error().message);
    }
    if (!*older || !args.value("namespace")) {
        return fail(std::string("gc needs --namespace N and --older-than D (e.g. 30d)"));
    }
    remote::GcRequest request;
    request.name = *args.value("namespace");
    if (std::string why = remote::namespace_problem(request.name); !why.empty()) {
        return fail("--namespace: " + why);
    }
    request.older_than = std::chrono::duration_cast<std::chrono::seconds>(**older);
    request.mode = args.has("dry-run") ? remote::GcMode::dry_run : remote::GcMode::remove;
    request.progress = [](const std::string& line) { std::cerr << "remote gc: " << line << "\n"; };
    return request;
}

int run_remote(const ParsedArgs& args) {
    auto request = gc_request(args);
    if (!request) {
        return report(Exit::usage, kCommand, request.error());
    }
    int code = 0;
    auto config = load_cli_config(kCommand, code);
    if (config) {
        // The breaker keeps its marks there, as for the commands that open the store.
        std::error_code ec;
        std::filesystem::create_directories(config->dir, ec);
    }
    auto client = config ? open_cli_remote(kCommand, *config, code) : std::nullopt;
    if (!client) {
        return code;
    }
    if (!*client) {
        return report(Exit::usage, kCommand, "no remote configured: set KCACHE_REMOTE");
    }
    auto done = (*client)->gc(*request);
    if (!done) {
        const bool usage = done.error().code == remote::RemoteErrc::read_only;
        return report(usage ? Exit::usage : Exit::action_needed, kCommand,
                      "gc: " + done.error().message + " (nothing removed)");
    }
    const auto& urls = (*client)->settings().base_urls;
    if (args.has("json")) {
        std::cout << report_json(*done, *request, urls).dump(2) << "\n";
    } else {
        const bool dry = request->mode == remote::GcMode::dry_run;
        std::cout << "remote gc: namespace " << request->name << ": " << done->listed << " listed, "
                  << done->old << " older than " << request->older_than.count() << " s, "
                  << (dry ? "0 removed (dry run)" : std::to_string(done->removed) + " removed")
                  << ", " << done->failed << " failed\n";
    }
    return done->failed > 0 ? static_cast<int>(Exit::action_needed) : 0;
}

}  // namespace

Command remote_command() {
    return {{kCommand,
             "gc --namespace N --older-than D [--dry-run] [--json]",
             "maintain the remote tier: remove a namespace's old objects",
             "  gc  lists the objects of namespace N (KCACHE_REMOTE_NAMESPACE's names) on\n"
             "      every server of KCACHE_REMOTE, with their age, and removes those older\n"
             "      than D (30d, 12h, 90m, 45s; bare digits are seconds). It never touches\n"
             "      another namespace or the default layout. With --dry-run it only lists\n"
             "      what it would remove. Each server is listed before anything is removed:\n"
             "      one that cannot be listed stops the run. Progress goes to stderr, the\n"
             "      summary (listed, older, removed, failed) or --json to stdout.\n"
             "      The age: WebDAV (Apache mod_dav, rclone, nginx with dav-ext) the\n"
             "      object's getlastmodified; S3 its LastModified; Redis its OBJECT\n"
             "      IDLETIME, the time since it was last read or written (Redis keeps no\n"
             "      write time). Plain nginx cannot list (no PROPFIND): gc says so.\n"
             "      docs/remote.md, \"Namespaces\".\n",
             {{"namespace", Arity::value, "N", "the namespace to clean"},
              {"older-than", Arity::value, "D", "remove objects older than this"},
              {"dry-run", Arity::flag, "", "list what would be removed; remove nothing"},
              {"json", Arity::flag, "", "print the report as JSON"}},
             1,
             1,
             std::string(kExitOk) +
                 "  1  an object could not be removed, or a server could not be listed\n"
                 "     (then nothing was removed)\n" +
                 kExitUsage +
                 "     (also: no remote configured, a bad namespace name, a read-only remote\n"
                 "     without --dry-run)\n"},
            run_remote};
}

}  // namespace kcache::cli
