// kcache capture: turns the requests real processes made (their KCACHE_TRACE
// files, observe/include/kcache/observe/trace.hpp) into a warm manifest
// (manifest.hpp): registry variants and the callers' own kernels, each with
// the devices it was asked for; own sources are written beside the manifest
// as sources/<sha256>.cl, one file per distinct source.

#include <iostream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "cli.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/common/replace_file.hpp"
#include "kcache/common/sha256.hpp"

namespace kcache::cli {
namespace {

using nlohmann::json;

// Requests that ended so: a later run asks again, and warm can build them.
const std::set<std::string> kReplayed = {"ok", "not_cached", "not_ready", "timeout"};

struct Own {
    std::string name, digest, options;
    std::vector<std::string> entry_points;
    auto operator<=>(const Own&) const = default;
};
using Registry = std::pair<std::string, std::map<std::string, std::string>>;

struct Captured {
    std::map<Registry, std::set<std::string>> registry;  // → devices
    std::map<Own, std::set<std::string>> own;
    std::map<std::string, std::string> sources;  // digest → text (verified)
    std::size_t requests = 0, skipped = 0, unreadable_lines = 0;
};

void add_request(const json& args, Captured& c) {
    ++c.requests;
    if (!kReplayed.count(args.value("status", ""))) {
        ++c.skipped;  // unknown kernel, bad argument, build error: nothing to warm
        return;
    }
    const std::string device = args.value("device", "");
    if (args.contains("kernel")) {
        Registry r{args["kernel"].get<std::string>(),
                   args.value("params", std::map<std::string, std::string>{})};
        c.registry[r].insert(device);
        return;
    }
    Own o{args.value("name", ""), args.value("source_sha256", ""), args.value("options", ""),
          args.value("entry_points", std::vector<std::string>{})};
    c.own[o].insert(device);
}

void add_event(const json& e, Captured& c) {
    const std::string name = e.value("name", "");
    if (name == "request" && e.contains("args")) {
        add_request(e["args"], c);
    } else if (name == "source" && e.contains("args") && e["args"].contains("text")) {
        const std::string text = e["args"]["text"].get<std::string>();
        const std::string digest = sha256_hex(text);
        if (digest == e["args"].value("sha256", "")) {  // the text is the one hashed
            c.sources[digest] = text;
        }
    }
}

// The longest trace line read: a source event holds at most 1 MiB of text
// (trace.cpp), which JSON's escapes can make a few times longer.
constexpr std::size_t kMaxTraceLine = 16u << 20;

// Reads one trace: one event per line after the "[" of the first, streamed
// from a regular file (a FIFO or a device is refused). A line that does not
// parse (the last one, cut by a full disk) or is too long is counted.
std::optional<ReadError> read_trace(const std::filesystem::path& path, Captured& c) {
    auto read = for_each_line(path, kMaxTraceLine, [&](std::string_view line, bool cut) {
        const std::size_t start = line.find_first_not_of("[, \t");
        if (cut) {
            ++c.unreadable_lines;
            return;
        }
        if (start == std::string_view::npos || line == "]") {
            return;
        }
        try {
            add_event(json::parse(line.substr(start)), c);
        } catch (const json::exception&) {
            ++c.unreadable_lines;
        }
    });
    if (!read) {
        return read.error();
    }
    return std::nullopt;
}

json devices_json(const std::set<std::string>& devices) {
    json out = json::array();
    for (const std::string& d : devices) {
        if (!d.empty()) {
            out.push_back(d);
        }
    }
    return out;
}

// The manifest of `c`; own kernels whose text no trace holds go to `missing`.
json manifest_of(const Captured& c, std::vector<std::string>& missing) {
    json doc{{"registry", json::array()}, {"kernels", json::array()}};
    for (const auto& [r, devices] : c.registry) {
        doc["registry"].push_back(
            {{"kernel", r.first}, {"params", r.second}, {"devices", devices_json(devices)}});
    }
    for (const auto& [o, devices] : c.own) {
        if (!c.sources.count(o.digest)) {
            missing.push_back(o.name + " (" + o.digest.substr(0, 16) + ")");
            continue;
        }
        doc["kernels"].push_back({{"name", o.name.empty() ? o.digest.substr(0, 16) : o.name},
                                  {"sources", {"sources/" + o.digest + ".cl"}},
                                  {"options", o.options},
                                  {"entry_points", o.entry_points},
                                  {"devices", devices_json(devices)}});
    }
    return doc;
}

// Writes the sources `doc` names under `dir`/sources (a file already there
// with the right digest is kept).
bool write_sources(const json& doc, const Captured& c, const std::filesystem::path& dir,
                   std::string& error) {
    std::error_code ec;
    std::filesystem::create_directories(dir / "sources", ec);
    if (ec) {
        error = "cannot make " + (dir / "sources").string() + ": " + ec.message();
        return false;
    }
    for (const json& k : doc["kernels"]) {
        const std::string rel = k["sources"][0].get<std::string>();
        const std::string digest = rel.substr(8, 64);
        const std::filesystem::path file = dir / rel;
        if (sha256_file_hex(file) == digest) {
            continue;  // deduplicated by digest: the same text is there
        }
        if (!replace_file(file, c.sources.at(digest), 0644, error)) {
            error = file.string() + ": " + error;
            return false;
        }
    }
    return true;
}

int run_capture(const ParsedArgs& args) {
    auto output = args.value("output");
    auto first = args.value("from-trace");
    if (!output || !first) {
        return report(Exit::usage, "capture",
                      "--from-trace TRACE and --output MANIFEST are needed");
    }
    std::vector<std::filesystem::path> traces{*first};
    for (const std::string& p : args.positionals()) {
        traces.emplace_back(p);
    }
    Captured c;
    for (const auto& t : traces) {
        if (auto refused = read_trace(t, c)) {
            return report(refused->code == ReadErrc::not_found ? Exit::not_found : Exit::usage,
                          "capture", "cannot read trace " + refused->message);
        }
    }
    std::vector<std::string> missing;
    const json doc = manifest_of(c, missing);
    if (doc["registry"].empty() && doc["kernels"].empty()) {
        return report(Exit::action_needed, "capture",
                      "no request to replay in " + std::to_string(traces.size()) + " trace(s) (" +
                          std::to_string(c.requests) + " requests read)");
    }
    const std::filesystem::path out = *output;
    std::string error;
    if (!write_sources(doc, c, out.parent_path().empty() ? "." : out.parent_path(), error) ||
        !replace_file(out, doc.dump(2) + "\n", 0644, error)) {
        return report(Exit::store_error, "capture", error);
    }
    std::cout << "capture: " << doc["registry"].size() << " registry variants, "
              << doc["kernels"].size() << " own kernels (" << c.requests << " requests, "
              << c.skipped << " not replayable) to " << out.string() << "\n";
    for (const std::string& m : missing) {
        std::cerr << "capture: own kernel " << m
                  << " left out: its source text is in no trace given\n";
    }
    if (c.unreadable_lines > 0) {
        std::cerr << "capture: " << c.unreadable_lines << " trace lines did not parse\n";
    }
    return missing.empty() ? 0 : static_cast<int>(Exit::action_needed);
}

}  // namespace

Command capture_command() {
    return {
        {"capture",
         "--from-trace TRACE [TRACE...] --output MANIFEST",
         "write a warm manifest of the requests traced processes made",
         "Reads trace files written by processes run with KCACHE_TRACE=FILE and writes\n"
         "a manifest for `kcache warm --manifest` and `kcache export --manifest`: each\n"
         "registry variant and each own kernel (source, options, entry points) that\n"
         "was answered or compiled, with the devices it was asked for. Own sources go\n"
         "beside the manifest as sources/<sha256>.cl, one file per distinct source.\n"
         "Requests that failed for good (unknown kernel, build error) are left out.\n",
         {{"from-trace", Arity::value, "TRACE", "a trace file (more may follow as arguments)"},
          {"output", Arity::value, "MANIFEST", "the manifest to write (replaced)"}},
         0,
         1024,
         std::string(kExitOk) +
             "  1  no request to replay, or an own kernel's source is in no trace\n" + kExitUsage +
             "  3  a trace cannot be read\n" + "  4  the manifest or a source cannot be written\n"},
        run_capture};
}

}  // namespace kcache::cli
