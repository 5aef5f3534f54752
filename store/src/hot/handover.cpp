// Handed-over write-backs (handover.hpp).

#include "hot/handover.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <sstream>

#include "kcache/common/hex.hpp"
#include "kcache/common/log.hpp"
#include "kcache/common/read_file.hpp"
#include "kcache/common/replace_file.hpp"

namespace kcache::store::hot {
namespace fs = std::filesystem;

namespace {

constexpr std::string_view kFirstLine = "kcache write-back 1";
constexpr std::string_view kWaiting = "writeback-";
constexpr std::string_view kClaimed = "claimed-";
constexpr std::size_t kMaxFileBytes = 1 << 20;

// A file waiting to be taken: "writeback-…", never replace_file()'s
// temporary sibling of one ("writeback-….tmp.XXXXXX").
bool waiting(std::string_view name) {
    return name.starts_with(kWaiting) && name.find(".tmp.") == std::string_view::npos;
}

bool key_hex_ok(std::string_view s) {
    std::uint8_t bytes[32];
    return parse_hex(s, bytes, sizeof bytes);
}

template <typename T>
bool number(std::string_view s, T& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size();
}

// Splits `line` at spaces.
std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> out;
    for (std::size_t pos = 0; pos < line.size();) {
        const std::size_t end = std::min(line.find(' ', pos), line.size());
        out.push_back(line.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

// One item line into `h`; false when it is none.
bool parse_item(const std::vector<std::string_view>& w, Handover& h) {
    if (w.size() == 4 && w[0] == "hit" && key_hex_ok(w[1])) {
        Handover::Hit hit{std::string(w[1]), 0, 0};
        if (number(w[2], hit.last_use) && number(w[3], hit.hits)) {
            h.hits.push_back(std::move(hit));
            return true;
        }
    } else if (w.size() == 3 && w[0] == "copy" && key_hex_ok(w[1])) {
        Checksum sum{};
        if (w[2] == "-" || parse_hex(w[2], sum.data(), sum.size())) {
            h.copies.emplace_back(std::string(w[1]),
                                  w[2] == "-" ? std::nullopt : std::optional<Checksum>(sum));
            return true;
        }
    } else if (w.size() == 3 && w[0] == "count" && w[1] == "hits") {
        return number(w[2], h.counts.hits);
    } else if (w.size() == 4 && w[0] == "count" && w[1] == "miss") {
        std::size_t reason = 0;
        return number(w[2], reason) && reason < kMissReasonCount &&
               number(w[3], h.counts.misses[reason]);
    }
    return false;
}

// Whether the process that claimed `name` ("claimed-<pid>-…") is gone.
bool claimed_by_the_dead(const std::string& name) {
    int pid = 0;
    const std::string_view rest = std::string_view(name).substr(kClaimed.size());
    const auto dash = rest.find('-');
    return dash != std::string_view::npos && number(rest.substr(0, dash), pid) && pid > 0 &&
           ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

std::string handover_text(const Handover& h) {
    std::ostringstream out;
    out << kFirstLine << '\n';
    for (const Handover::Hit& hit : h.hits) {
        out << "hit " << hit.key_hex << ' ' << hit.last_use << ' ' << hit.hits << '\n';
    }
    for (const auto& [key_hex, sum] : h.copies) {
        out << "copy " << key_hex << ' ' << (sum ? to_hex(*sum) : "-") << '\n';
    }
    out << "count hits " << h.counts.hits << '\n';
    for (std::size_t r = 0; r < kMissReasonCount; ++r) {
        if (h.counts.misses[r] != 0) {
            out << "count miss " << r << ' ' << h.counts.misses[r] << '\n';
        }
    }
    return out.str();
}

std::optional<Handover> parse_handover(std::string_view text) {
    if (!text.starts_with(kFirstLine) || text.size() == kFirstLine.size() ||
        text[kFirstLine.size()] != '\n' || text.back() != '\n') {
        return std::nullopt;  // not one, or cut short
    }
    Handover h;
    h.counts.name = "user";
    for (std::size_t pos = kFirstLine.size() + 1; pos < text.size();) {
        const std::size_t end = text.find('\n', pos);
        if (!parse_item(words(text.substr(pos, end - pos)), h)) {
            return std::nullopt;
        }
        pos = end + 1;
    }
    return h;
}

bool write_handover(const fs::path& dir, const Handover& h) {
    const auto ns = std::chrono::steady_clock::now().time_since_epoch().count();
    const std::string name =
        std::string(kWaiting) + std::to_string(::getpid()) + "-" + std::to_string(ns);
    std::string error;
    return replace_file(dir / name, handover_text(h), 0600, error);
}

std::size_t count_handovers(const fs::path& dir) {
    std::size_t n = 0;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end && n < kMaxHandovers;
         it.increment(ec)) {
        n += waiting(it->path().filename().string()) ? 1 : 0;
    }
    return n;
}

std::vector<Handover> take_handovers(const fs::path& dir) {
    std::vector<fs::path> claimed;
    const std::string mine = std::string(kClaimed) + std::to_string(::getpid()) + "-";
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const bool is_waiting = waiting(name);
        std::error_code type_ec;
        if ((!is_waiting && !(name.starts_with(kClaimed) && claimed_by_the_dead(name))) ||
            it->symlink_status(type_ec).type() != fs::file_type::regular) {
            continue;  // not one (a link or a directory of that name is never followed)
        }
        const std::string base =
            is_waiting ? name : name.substr(name.find('-', kClaimed.size()) + 1);
        const fs::path to = dir / (mine + base);
        if (::rename(it->path().c_str(), to.c_str()) == 0) {
            claimed.push_back(to);  // renamed first by another reader: theirs
        }
    }
    std::vector<Handover> out;
    for (const fs::path& f : claimed) {
        auto text = read_regular_file(f, kMaxFileBytes);
        auto parsed = text ? parse_handover(*text) : std::nullopt;
        if (parsed) {
            out.push_back(std::move(*parsed));
        } else {
            logging::warning("write-back " + f.string() + " left by an earlier process is " +
                             (text ? "not one kcache wrote" : text.error().message) +
                             ": removed (only its hit counts are lost)");
        }
        ::unlink(f.c_str());
    }
    return out;
}

}  // namespace kcache::store::hot
