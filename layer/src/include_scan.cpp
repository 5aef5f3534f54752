// The files a build from source reads (include_scan.hpp). The scan is a
// superset of what the compiler reads: every `#include` counts, in a branch
// the preprocessor takes or not, and every directory it could be found in
// (the includer's, the working directory, the option's and the default
// ones, whatever their order), present or absent.

#include "include_scan.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>

#include "kcache/common/hex.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/common/sha256.hpp"

namespace kcache::layer {
namespace {

constexpr std::size_t kMaxFileBytes = std::size_t{64} << 20;
constexpr std::size_t kMaxFiles = 20000;

// A directory to search: where the layer opens it and how the compiler
// names files in it ("" for the working directory).
struct Dir {
    std::string path;
    std::string spelled;
};

std::string joined(const std::string& dir, const std::string& name) {
    return dir.empty() ? name : dir.back() == '/' ? dir + name : dir + "/" + name;
}

std::string parent_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? "" : slash == 0 ? "/" : path.substr(0, slash);
}

bool add_macro(const std::string& definition, Macros& macros) {
    const auto eq = definition.find('=');
    std::string head = definition.substr(0, eq);
    Macro m;
    m.body = eq == std::string::npos ? "1" : definition.substr(eq + 1);
    if (const auto open = head.find('('); open != std::string::npos) {
        if (head.back() != ')') {
            return false;
        }
        m.function_like = true;
        std::string params = head.substr(open + 1, head.size() - open - 2);
        for (std::size_t at = 0; !params.empty() && at != std::string::npos;) {
            const auto comma = params.find(',', at);
            m.params.push_back(params.substr(at, comma - at));
            at = comma == std::string::npos ? comma : comma + 1;
        }
        head.resize(open);
    }
    macros[head] = std::move(m);
    return !head.empty();
}

struct Scanner {
    const SearchPaths& paths;
    IncludeScan result;
    std::map<std::string, std::size_t> seen;          // path -> index in result.files
    std::deque<std::pair<std::string, Dir>> pending;  // texts to read, and their directory
    std::set<std::string> defined, used;
    bool has_include_test = false;

    bool stop(std::string why) {
        result.reason = std::move(why);
        return false;
    }

    // Looks for `name` at `path`; true when it is there (and queued).
    bool look(const std::string& path, const std::string& spelled, bool& ok) {
        if (const auto at = seen.find(path); at != seen.end()) {
            return result.files[at->second].exists;
        }
        IncludeFile f{path, spelled, false, {}, {}};
        bool missing = false;
        int error = 0;
        if (!identify(path, f.identity, missing, error)) {
            if (!missing) {
                ok = stop(spelled + " cannot be read (" +
                          (error != 0 ? std::strerror(error) : "not a regular file") + ")");
            }
            f.identity = {};
        } else {
            auto text = read_regular_file(path, kMaxFileBytes);
            if (!text) {
                ok = stop(spelled + " cannot be read (" + text.error().message + ")");
                return false;
            }
            f.exists = true;
            f.digest = sha256_hex(*text);
            pending.emplace_back(std::move(*text), Dir{parent_of(path), parent_of(spelled)});
        }
        seen.emplace(path, result.files.size());
        result.files.push_back(std::move(f));
        return result.files.back().exists;
    }

    bool include(const IncludeLine& line, const Dir& includer) {
        std::string error;
        const auto name = expand_include(line.operand, paths.macros, used, error);
        if (!name) {
            return stop("an #include the layer cannot follow: " + error);
        }
        std::vector<Dir> dirs;
        if (name->name.front() == '/') {
            dirs.push_back({"", ""});
        } else {
            dirs.push_back(includer);
            dirs.push_back({paths.cwd, ""});
            for (const std::string& d : paths.dirs) {
                dirs.push_back({d.front() == '/' ? d : joined(paths.cwd, d), d});
            }
        }
        bool found = false;
        bool ok = true;
        for (const Dir& d : dirs) {
            found |= look(joined(d.path, name->name), joined(d.spelled, name->name), ok);
            if (!ok) {
                return false;
            }
        }
        if (result.files.size() > kMaxFiles) {
            return stop("the program includes more than " + std::to_string(kMaxFiles) + " files");
        }
        return found || paths.all_known ||
               stop("`#include " + line.operand + "` is in no directory the layer knows");
    }

    bool read(std::string_view text, const Dir& dir) {
        Directives d = directives_of(text);
        defined.merge(d.defined);
        has_include_test |= d.has_include_test;
        for (const IncludeLine& line : d.includes) {
            if (!include(line, dir)) {
                return false;
            }
        }
        return true;
    }

    // Macros of the options that the program's text redefines, or that the
    // compiler may predefine, make an expansion the layer did not see.
    bool expansions_hold() {
        for (const std::string& id : used) {
            if (id.rfind("__", 0) == 0) {
                return stop("an #include's operand uses " + id + ", which the compiler may define");
            }
            if (defined.count(id) != 0) {
                return stop("an #include's operand uses " + id + ", which the program's text " +
                            "defines or undefines");
            }
        }
        return !has_include_test || stop("the program's text tests for files (__has_include)");
    }
};

std::string digest_of(const std::vector<IncludeFile>& files) {
    Sha256 h;
    h.update("kcache layer includes 1\n");
    for (const IncludeFile& f : files) {
        h.update(f.spelled);
        h.update(std::string_view("\0", 1));
        h.update(f.exists ? f.digest : std::string("-"));
        h.update("\n");
    }
    return to_hex(h.finish());
}

}  // namespace

SearchPaths search_paths(std::string_view options, const std::string& cwd,
                         const DefaultDirs& defaults, std::string& why) {
    SearchPaths p{cwd, {}, {}, defaults.all_known};
    const auto words = split_options(options);
    if (!words) {
        why = "the options quote in a way the layer does not split";
        return p;
    }
    static const std::vector<std::string> kDirOptions = {"-iquote", "-I", "-isystem", "-idirafter"};
    for (std::size_t i = 0; i < words->size(); ++i) {
        const std::string& w = (*words)[i];
        const bool has_next = i + 1 < words->size();
        if (w == "-include" || w == "-imacros" || w == "-U" || w.rfind("-U", 0) == 0) {
            why = "the options " + std::string(w == "-include" || w == "-imacros"
                                                   ? "include files"
                                                   : "undefine macros");
            return p;
        }
        for (const std::string& o : kDirOptions) {
            if (w.rfind(o, 0) == 0 && (w.size() > o.size() || has_next)) {
                p.dirs.push_back(w.size() > o.size() ? w.substr(o.size()) : (*words)[++i]);
                break;
            }
        }
        if (w.rfind("-D", 0) == 0 && (w.size() > 2 || has_next) &&
            !add_macro(w.size() > 2 ? w.substr(2) : (*words)[++i], p.macros)) {
            why = "the options define a macro the layer does not parse";
            return p;
        }
    }
    std::erase_if(p.dirs, [](const std::string& d) { return d.empty(); });
    p.dirs.insert(p.dirs.end(), defaults.dirs.begin(), defaults.dirs.end());
    return p;
}

bool identify(const std::string& path, FileIdentity& out, bool& missing, int& error) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        error = errno;
        missing = error == ENOENT || error == ENOTDIR;
        return false;
    }
    error = 0;
    missing = false;
    if (!S_ISREG(st.st_mode)) {
        return false;
    }
    out = {static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
           static_cast<std::uint64_t>(st.st_size),
           st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec,
           st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec};
    // A file changed in the last two seconds may change again within the
    // same timestamp: it is not to be known by its identity.
    const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    if (now - std::max(out.mtime_ns, out.ctime_ns) < 2'000'000'000LL) {
        out = {};
    }
    return true;
}

IncludeScan scan_includes(std::string_view source, const SearchPaths& paths) {
    Scanner s{paths, {}, {}, {}, {}, {}, false};
    if (!s.read(source, Dir{paths.cwd, ""})) {
        return s.result;
    }
    while (!s.pending.empty()) {
        const auto [text, dir] = std::move(s.pending.front());
        s.pending.pop_front();
        if (!s.read(text, dir)) {
            return s.result;
        }
    }
    if (s.expansions_hold() && !s.result.files.empty()) {
        s.result.digest = digest_of(s.result.files);
    }
    return s.result;
}

}  // namespace kcache::layer
