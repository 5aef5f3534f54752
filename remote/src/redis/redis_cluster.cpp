// Redis Cluster routing: key slots, the CLUSTER SLOTS reply, redirects and
// the slot map (redis_cluster.hpp).
//
// CLUSTER SLOTS reply, as read here:
//   reply := array of range
//   range := array: integer first, integer last, node master, node replica*
//   node  := array: string host, integer port, [string id], [map of extra fields]

#include "redis_cluster.hpp"

#include <algorithm>
#include <charconv>

namespace kcache::remote {

std::uint16_t crc16(std::string_view data) {
    std::uint16_t crc = 0;
    for (char ch : data) {
        crc ^= static_cast<std::uint16_t>(static_cast<unsigned char>(ch) << 8);
        for (int bit = 0; bit < 8; ++bit) {
            crc = (crc & 0x8000) != 0 ? static_cast<std::uint16_t>((crc << 1) ^ 0x1021)
                                      : static_cast<std::uint16_t>(crc << 1);
        }
    }
    return crc;
}

int key_slot(std::string_view key) {
    const auto open = key.find('{');
    if (open != std::string_view::npos) {
        const auto close = key.find('}', open + 1);
        if (close != std::string_view::npos && close > open + 1) {
            key = key.substr(open + 1, close - open - 1);
        }
    }
    return crc16(key) % kClusterSlots;
}

namespace {

// The node of a range's entry `r`.
Result<RedisNode, std::string> node_of(const redisReply* r, const RedisNode& asked) {
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 2 ||
        r->element[0]->type != REDIS_REPLY_STRING || r->element[1]->type != REDIS_REPLY_INTEGER) {
        return fail(std::string("a node that is not [host, port, …]"));
    }
    RedisNode node{std::string(r->element[0]->str, r->element[0]->len),
                   static_cast<int>(r->element[1]->integer)};
    if (r->element[1]->integer <= 0 || r->element[1]->integer > 65535) {
        return fail("port " + std::to_string(r->element[1]->integer) + " out of range");
    }
    if (node.host.empty() || node.host == "?") {
        node.host = asked.host;
    }
    return node;
}

}  // namespace

Result<std::vector<SlotRange>, std::string> parse_cluster_slots(const redisReply* reply,
                                                                const RedisNode& asked) {
    if (reply == nullptr || reply->type != REDIS_REPLY_ARRAY) {
        return fail(std::string("CLUSTER SLOTS did not answer an array"));
    }
    std::vector<SlotRange> out;
    for (std::size_t i = 0; i < reply->elements; ++i) {
        const redisReply* r = reply->element[i];
        if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
            r->element[0]->type != REDIS_REPLY_INTEGER ||
            r->element[1]->type != REDIS_REPLY_INTEGER) {
            return fail("range " + std::to_string(i) + " is not [first, last, master, …]");
        }
        const long long first = r->element[0]->integer;
        const long long last = r->element[1]->integer;
        if (first < 0 || last < first || last >= kClusterSlots) {
            return fail("range " + std::to_string(i) + " has slots " + std::to_string(first) + "-" +
                        std::to_string(last));
        }
        auto master = node_of(r->element[2], asked);
        if (!master) {
            return fail("range " + std::to_string(i) + ": " + master.error());
        }
        out.push_back({static_cast<int>(first), static_cast<int>(last), std::move(*master)});
    }
    return out;
}

std::optional<Redirect> parse_redirect(std::string_view error, const RedisNode& asked) {
    Redirect r;
    if (error.substr(0, 6) == "MOVED ") {
        error.remove_prefix(6);
    } else if (error.substr(0, 4) == "ASK ") {
        r.kind = Redirect::Kind::ask;
        error.remove_prefix(4);
    } else {
        return std::nullopt;
    }
    const auto space = error.find(' ');
    const auto colon = error.rfind(':');
    if (space == std::string_view::npos || colon == std::string_view::npos || colon < space) {
        return std::nullopt;
    }
    const std::string_view slot = error.substr(0, space);
    const std::string_view port = error.substr(colon + 1);
    auto [s_end, s_ec] = std::from_chars(slot.data(), slot.data() + slot.size(), r.slot);
    auto [p_end, p_ec] = std::from_chars(port.data(), port.data() + port.size(), r.node.port);
    if (s_ec != std::errc() || s_end != slot.data() + slot.size() || p_ec != std::errc() ||
        p_end != port.data() + port.size() || r.slot < 0 || r.slot >= kClusterSlots ||
        r.node.port <= 0 || r.node.port > 65535) {
        return std::nullopt;
    }
    std::string_view host = error.substr(space + 1, colon - space - 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    r.node.host = host.empty() ? asked.host : std::string(host);
    return r;
}

std::optional<RedisNode> SlotMap::node_for(int slot) {
    std::lock_guard g(mu_);
    if (stale_ || slots_[slot] == 0) {
        return std::nullopt;
    }
    return nodes_[slots_[slot] - 1];
}

std::optional<RedisNode> SlotMap::last_known(int slot) {
    std::lock_guard g(mu_);
    if (slots_[slot] == 0) {
        return std::nullopt;
    }
    return nodes_[slots_[slot] - 1];
}

std::vector<RedisNode> SlotMap::masters() {
    std::lock_guard g(mu_);
    return stale_ ? std::vector<RedisNode>() : nodes_;
}

void SlotMap::load(const std::vector<SlotRange>& ranges) {
    std::lock_guard g(mu_);
    nodes_.clear();
    slots_.fill(0);
    for (const SlotRange& r : ranges) {
        auto it = std::find(nodes_.begin(), nodes_.end(), r.master);
        if (it == nodes_.end()) {
            it = nodes_.insert(nodes_.end(), r.master);
        }
        std::fill(slots_.begin() + r.first, slots_.begin() + r.last + 1,
                  static_cast<std::int16_t>(it - nodes_.begin() + 1));
    }
    failed_.clear();
    stale_ = false;
}

void SlotMap::moved(int slot, const RedisNode& node) {
    std::lock_guard g(mu_);
    auto it = std::find(nodes_.begin(), nodes_.end(), node);
    if (it == nodes_.end()) {
        it = nodes_.insert(nodes_.end(), node);
    }
    slots_[slot] = static_cast<std::int16_t>(it - nodes_.begin() + 1);
    stale_ = true;
}

void SlotMap::failed(const RedisNode& node) {
    std::lock_guard g(mu_);
    if (std::find(failed_.begin(), failed_.end(), node) == failed_.end()) {
        failed_.push_back(node);
    }
    stale_ = true;
}

std::vector<RedisNode> SlotMap::candidates() {
    std::lock_guard g(mu_);
    std::vector<RedisNode> out;
    auto add = [&](const RedisNode& n) {
        if (std::find(out.begin(), out.end(), n) == out.end()) {
            out.push_back(n);
        }
    };
    for (const auto* list : {&nodes_, &seeds_}) {
        for (const RedisNode& n : *list) {
            if (std::find(failed_.begin(), failed_.end(), n) == failed_.end()) {
                add(n);
            }
        }
    }
    for (const RedisNode& n : failed_) {
        add(n);
    }
    return out;
}

}  // namespace kcache::remote
