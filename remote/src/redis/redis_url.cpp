// Redis URLs (grammar in redis_url.hpp).

#include "redis_url.hpp"

#include <charconv>
#include <string_view>

namespace kcache::remote {
namespace {

constexpr std::string_view kSchemes[] = {"redis+cluster://", "rediss://", "redis://"};

// `text` with %XX escapes decoded into `out`; false when an escape is broken.
bool percent_decode(std::string_view text, std::string& out) {
    out.clear();
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out += text[i];
            continue;
        }
        unsigned value = 0;
        if (i + 2 >= text.size()) {
            return false;
        }
        const auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
        if (ec != std::errc() || end != text.data() + i + 3) {
            return false;
        }
        out += static_cast<char>(value);
        i += 2;
    }
    return true;
}

bool parse_number(std::string_view text, int max, int& out) {
    if (text.empty() || text.size() > 9) {
        return false;
    }
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && out >= 0 && out <= max;
}

// One "host[:port]" or "[v6]:port".
Result<RedisNode, std::string> parse_node(std::string_view text) {
    RedisNode node;
    std::string_view port;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos) {
            return fail(std::string("an IPv6 address without ']'"));
        }
        node.host = std::string(text.substr(1, close - 1));
        const std::string_view rest = text.substr(close + 1);
        if (!rest.empty() && rest.front() != ':') {
            return fail(std::string("text after an IPv6 address"));
        }
        port = rest.empty() ? rest : rest.substr(1);
    } else {
        const auto colon = text.find(':');
        node.host = std::string(text.substr(0, colon));
        port = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
    }
    if (node.host.empty()) {
        return fail(std::string("no host"));
    }
    if (!port.empty() && (!parse_number(port, 65535, node.port) || node.port == 0)) {
        return fail("port " + std::string(port) + " is not a port number");
    }
    return node;
}

// Splits "user:password" into `u`; false on a broken escape.
bool parse_userinfo(std::string_view info, RedisUrl& u) {
    const auto colon = info.find(':');
    u.has_password = colon != std::string_view::npos;
    return percent_decode(info.substr(0, colon), u.user) &&
           (!u.has_password || percent_decode(info.substr(colon + 1), u.password));
}

}  // namespace

std::string to_string(const RedisNode& node) {
    const bool v6 = node.host.find(':') != std::string::npos;
    return (v6 ? "[" + node.host + "]" : node.host) + ":" + std::to_string(node.port);
}

Result<RedisUrl, std::string> parse_redis_url(const std::string& url) {
    RedisUrl u;
    std::string_view rest(url);
    std::string_view scheme;
    for (std::string_view s : kSchemes) {
        if (rest.substr(0, s.size()) == s) {
            scheme = s;
        }
    }
    if (scheme.empty()) {
        return fail(std::string("not a redis://, rediss:// or redis+cluster:// URL"));
    }
    u.mode = scheme == kSchemes[0] ? RedisMode::cluster : RedisMode::single;
    u.tls = scheme == kSchemes[1];
    rest.remove_prefix(scheme.size());
    const std::string_view authority = rest.substr(0, rest.find('/'));
    std::string_view path = rest.substr(authority.size());
    const auto at = authority.rfind('@');
    if (at != std::string_view::npos && !parse_userinfo(authority.substr(0, at), u)) {
        return fail(std::string("a broken %-escape in the user or password"));
    }
    std::string_view nodes = at == std::string_view::npos ? authority : authority.substr(at + 1);
    std::string names;
    while (true) {
        const auto comma = nodes.find(',');
        auto node = parse_node(nodes.substr(0, comma));
        if (!node) {
            return fail(node.error());
        }
        names += (names.empty() ? "" : ",") + to_string(*node);
        u.nodes.push_back(std::move(*node));
        if (comma == std::string_view::npos) {
            break;
        }
        nodes.remove_prefix(comma + 1);
    }
    if (u.mode == RedisMode::single && u.nodes.size() > 1) {
        return fail(std::string("several hosts are seeds of a cluster: use redis+cluster://"));
    }
    if (!path.empty()) {
        path.remove_prefix(1);
    }
    const std::string_view first = path.substr(0, path.find('/'));
    if (!first.empty() && first.find_first_not_of("0123456789") == std::string_view::npos) {
        if (!parse_number(first, 1 << 20, u.db)) {
            return fail("database " + std::string(first) + " is out of range");
        }
        if (u.mode == RedisMode::cluster && u.db != 0) {
            return fail(std::string("a Redis Cluster has database 0 only"));
        }
        path.remove_prefix(std::min(path.size(), first.size() + 1));
    }
    u.key = std::string(path);
    u.server = std::string(scheme) + names + "/" + std::to_string(u.db);
    return u;
}

}  // namespace kcache::remote
