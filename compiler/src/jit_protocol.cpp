#include "kcache/compiler/jit_protocol.hpp"

#include "kcache/compiler/binary_check.hpp"
#include "wire.hpp"

// Wire grammar (all integers little-endian). A one-shot helper reads one
// request and writes one reply; a pooled helper (`kcache-jit --serve`) reads
// requests until end of file and answers each with one reply before it reads
// the next, or with two when the reply says warm_pending (the second carries
// the warmed binary, or why there is none):
//
//   session   := (request reply [reply])*                    (one pair: one-shot)
//   frame     := magic:"KCJT" version:u32(=6) kind:u32 length:u64 payload[length]
//                kind 1 = request (length <= kMaxRequestPayload)
//                kind 2 = reply   (length <= kMaxReplyPayload)
//   str       := n:u32 byte[n]
//   blob      := n:u64 byte[n]
//   flag      := u8 (0 or 1)
//
//   request   := selector source:str options:str
//                il:blob                 (empty: build source; else SPIR-V: n % 4 == 0,
//                                         first word 0x07230203 little-endian)
//                entry_count:u32 entry:str{entry_count}   (entry_count <= 4096, no empty names)
//                address_space_cap:u64 build_stack_bytes:u64 (1 MiB .. 4 GiB)
//                has_warmup:flag [warmup warm_after_reply:flag]
//                unit_count:u32 unit{unit_count}           (unit_count <= 4096; 0: a build,
//                                                           else a link of the units with
//                                                           `options`, and il empty)
//                compile_only:flag                         (1: the one unit's compile alone;
//                                                           unit_count 1, no entry point,
//                                                           no warm-up)
//   unit      := source:str (not empty) options:str header_count:u32 (<= 4096)
//                (name:str (not empty) header_source:str){header_count}
//   selector  := platform_name:str device_name:str driver_version:str vendor_id:u32
//                uuid_hex:str                              (empty or 32 hex digits)
//   warmup    := work_dim:u32 (1..3) global:u64[3] local:u64[3] buffer_bytes:u64
//                (for d < work_dim: local[d] >= 1, global[d] a multiple of local[d])
//
//   reply     := status:u32 (a ReplyStatus) message:str binary:blob build_log:str
//                select_us:u64 context_us:u64 build_us:u64 warmup_us:u64 fetch_us:u64
//                validate_us:u64 total_us:u64 warmed:flag warmup_note:str warm_pending:flag
//                helper_pid:u32 served:u64 (>= 1)
//                started_ns:u64 request_ns:u64 reply_ns:u64   (CLOCK_MONOTONIC)
//
// The payload must be consumed exactly; trailing bytes are an error.

namespace kcache::compiler {
namespace {

constexpr char kMagic[4] = {'K', 'C', 'J', 'T'};
constexpr std::uint32_t kKindRequest = 1;
constexpr std::uint32_t kKindReply = 2;
constexpr std::uint32_t kMaxEntryPoints = 4096;
constexpr std::uint32_t kMaxUnits = 4096;

std::string frame(std::uint32_t kind, const std::string& payload) {
    wire::Writer w;
    for (char c : kMagic) {
        w.u8(static_cast<std::uint8_t>(c));
    }
    w.u32(kProtocolVersion);
    w.u32(kind);
    w.u64(payload.size());
    return w.take() + payload;
}

Unexpected<CompilerError> bad_frame(std::string message) {
    return fail(CompilerError{CompilerErrc::bad_frame, std::move(message)});
}

// Checks magic, version, kind and length; returns the payload length.
Result<std::uint64_t, CompilerError> check_header(const std::string& bytes, std::uint32_t kind,
                                                  std::uint64_t max_payload) {
    if (bytes.size() < kFrameHeaderSize) {
        return bad_frame("frame header is truncated");
    }
    if (bytes.compare(0, 4, kMagic, 4) != 0) {
        return bad_frame("bad magic (not a kcache-jit frame)");
    }
    wire::Reader r(std::string_view(bytes).substr(4, kFrameHeaderSize - 4));
    std::uint32_t version = 0;
    std::uint32_t got_kind = 0;
    std::uint64_t length = 0;
    (void)(r.u32(version, "version") && r.u32(got_kind, "kind") && r.u64(length, "length"));
    if (version != kProtocolVersion) {
        return bad_frame("unsupported version " + std::to_string(version));
    }
    if (got_kind != kind) {
        return bad_frame("unexpected frame kind " + std::to_string(got_kind));
    }
    if (length > max_payload) {
        return bad_frame("payload length " + std::to_string(length) + " exceeds the limit");
    }
    return length;
}

Result<std::string_view, CompilerError> payload_of(const std::string& frame_bytes,
                                                   std::uint32_t kind, std::uint64_t max) {
    auto length = check_header(frame_bytes, kind, max);
    if (!length) {
        return fail(length.error());
    }
    if (frame_bytes.size() - kFrameHeaderSize < *length) {
        return bad_frame("payload is truncated");
    }
    if (frame_bytes.size() - kFrameHeaderSize > *length) {
        return bad_frame("trailing bytes after the frame");
    }
    return std::string_view(frame_bytes).substr(kFrameHeaderSize);
}

bool is_hex(const std::string& s) {
    return s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

bool read_selector(wire::Reader& r, DeviceSelector& d) {
    if (!(r.str(d.platform_name, "platform_name") && r.str(d.device_name, "device_name") &&
          r.str(d.driver_version, "driver_version") && r.u32(d.vendor_id, "vendor_id") &&
          r.str(d.uuid_hex, "uuid_hex"))) {
        return false;
    }
    if (!d.uuid_hex.empty() && (d.uuid_hex.size() != 32 || !is_hex(d.uuid_hex))) {
        return r.fail("uuid_hex", "is not 32 lowercase hex digits");
    }
    return true;
}

bool read_entry_points(wire::Reader& r, std::vector<std::string>& out) {
    std::uint32_t n = 0;
    if (!r.u32(n, "entry_count")) {
        return false;
    }
    if (n > kMaxEntryPoints) {
        return r.fail("entry_count", "is too large");
    }
    out.resize(n);
    for (auto& e : out) {
        if (!r.str(e, "entry point")) {
            return false;
        }
        if (e.empty()) {
            return r.fail("entry point", "is empty");
        }
    }
    return true;
}

bool read_warmup(wire::Reader& r, WarmupLaunch& w) {
    bool ok = r.u32(w.work_dim, "work_dim");
    for (auto& g : w.global) {
        ok = ok && r.u64(g, "global size");
    }
    for (auto& l : w.local) {
        ok = ok && r.u64(l, "local size");
    }
    ok = ok && r.u64(w.buffer_bytes, "buffer_bytes");
    if (!ok) {
        return false;
    }
    if (w.work_dim < 1 || w.work_dim > 3) {
        return r.fail("work_dim", "is not 1, 2 or 3");
    }
    for (std::uint32_t d = 0; d < w.work_dim; ++d) {
        if (w.local[d] == 0 || w.global[d] == 0 || w.global[d] % w.local[d] != 0) {
            return r.fail("global size", "is not a non-zero multiple of the local size");
        }
    }
    return true;
}

// An IL payload is empty or a SPIR-V module: whole 32-bit words after the
// little-endian magic number.
bool check_il(wire::Reader& r, const std::string& il) {
    if (il.empty() || (il.size() % 4 == 0 && looks_like_spirv(il))) {
        return true;
    }
    return r.fail("il", "is not a SPIR-V module (magic number, whole 32-bit words)");
}

// A count of a link's units or a unit's headers (at most kMaxUnits).
bool read_count(wire::Reader& r, std::uint32_t& n, const char* field) {
    return r.u32(n, field) && (n <= kMaxUnits || r.fail(field, "is too large"));
}

// A unit's input headers, each named.
bool read_headers(wire::Reader& r, CompileUnit& u) {
    std::uint32_t n = 0;
    if (!read_count(r, n, "header_count")) {
        return false;
    }
    u.headers.resize(n);
    for (auto& [name, text] : u.headers) {
        if (!(r.str(name, "header name") && r.str(text, "header source"))) {
            return false;
        }
        if (name.empty()) {
            return r.fail("header name", "is empty");
        }
    }
    return true;
}

// The units of a link: none for a build; a link's have source and no IL.
bool read_units(wire::Reader& r, JitRequest& q) {
    std::uint32_t n = 0;
    if (!read_count(r, n, "unit_count")) {
        return false;
    }
    if (n > 0 && !q.il.empty()) {
        return r.fail("unit_count", "is not 0 with an IL module (a link is of sources)");
    }
    q.units.resize(n);
    for (auto& u : q.units) {
        if (!(r.str(u.source, "unit source") && r.str(u.options, "unit options") &&
              read_headers(r, u))) {
            return false;
        }
        if (u.source.empty()) {
            return r.fail("unit source", "is empty");
        }
    }
    return true;
}

bool read_request(wire::Reader& r, JitRequest& q) {
    bool has_warmup = false;
    if (!(read_selector(r, q.device) && r.str(q.source, "source") && r.str(q.options, "options") &&
          r.blob(q.il, "il") && check_il(r, q.il) && read_entry_points(r, q.entry_points) &&
          r.u64(q.address_space_cap, "address_space_cap") &&
          r.u64(q.build_stack_bytes, "build_stack_bytes") && r.flag(has_warmup, "has_warmup"))) {
        return false;
    }
    if (q.build_stack_bytes < (1u << 20) || q.build_stack_bytes > (4ull << 30)) {
        return r.fail("build_stack_bytes", "is outside 1 MiB .. 4 GiB");
    }
    if (has_warmup) {
        q.warmup.emplace();
        if (!(read_warmup(r, *q.warmup) && r.flag(q.warm_after_reply, "warm_after_reply"))) {
            return false;
        }
    }
    if (!(read_units(r, q) && r.flag(q.compile_only, "compile_only"))) {
        return false;
    }
    if (q.compile_only && (q.units.size() != 1 || !q.entry_points.empty() || q.warmup)) {
        return r.fail("compile_only",
                      "is set without exactly one unit, or with entry points "
                      "or a warm-up (a compiled object has no kernels)");
    }
    return true;
}

}  // namespace

std::string encode_request(const JitRequest& q) {
    wire::Writer w;
    w.str(q.device.platform_name);
    w.str(q.device.device_name);
    w.str(q.device.driver_version);
    w.u32(q.device.vendor_id);
    w.str(q.device.uuid_hex);
    w.str(q.source);
    w.str(q.options);
    w.blob(q.il);
    w.u32(static_cast<std::uint32_t>(q.entry_points.size()));
    for (const auto& e : q.entry_points) {
        w.str(e);
    }
    w.u64(q.address_space_cap);
    w.u64(q.build_stack_bytes);
    w.u8(q.warmup ? 1 : 0);
    if (q.warmup) {
        w.u32(q.warmup->work_dim);
        for (auto g : q.warmup->global) {
            w.u64(g);
        }
        for (auto l : q.warmup->local) {
            w.u64(l);
        }
        w.u64(q.warmup->buffer_bytes);
        w.u8(q.warm_after_reply ? 1 : 0);
    }
    w.u32(static_cast<std::uint32_t>(q.units.size()));
    for (const auto& u : q.units) {
        w.str(u.source);
        w.str(u.options);
        w.u32(static_cast<std::uint32_t>(u.headers.size()));
        for (const auto& [name, text] : u.headers) {
            w.str(name);
            w.str(text);
        }
    }
    w.u8(q.compile_only ? 1 : 0);
    return frame(kKindRequest, w.take());
}

std::string encode_reply(const JitReply& a) {
    wire::Writer w;
    w.u32(static_cast<std::uint32_t>(a.status));
    w.str(a.message);
    w.blob(a.binary);
    w.str(a.build_log);
    for (std::uint64_t v :
         {a.timings.select_us, a.timings.context_us, a.timings.build_us, a.timings.warmup_us,
          a.timings.fetch_us, a.timings.validate_us, a.timings.total_us}) {
        w.u64(v);
    }
    w.u8(a.warmed ? 1 : 0);
    w.str(a.warmup_note);
    w.u8(a.warm_pending ? 1 : 0);
    w.u32(a.helper_pid);
    w.u64(a.served);
    w.u64(a.stamps.started_ns);
    w.u64(a.stamps.request_ns);
    w.u64(a.stamps.reply_ns);
    return frame(kKindReply, w.take());
}

Result<std::uint64_t, CompilerError> check_request_header(const std::string& header) {
    return check_header(header, kKindRequest, kMaxRequestPayload);
}

Result<std::uint64_t, CompilerError> check_reply_header(const std::string& header) {
    return check_header(header, kKindReply, kMaxReplyPayload);
}

Result<JitRequest, CompilerError> decode_request(const std::string& frame_bytes) {
    auto payload = payload_of(frame_bytes, kKindRequest, kMaxRequestPayload);
    if (!payload) {
        return fail(payload.error());
    }
    wire::Reader r(*payload);
    JitRequest q;
    if (!read_request(r, q)) {
        return bad_frame("request: " + r.error());
    }
    if (!r.at_end()) {
        return bad_frame("request: trailing bytes after the last field");
    }
    return q;
}

Result<JitReply, CompilerError> decode_reply(const std::string& frame_bytes) {
    auto payload = payload_of(frame_bytes, kKindReply, kMaxReplyPayload);
    if (!payload) {
        return fail(payload.error());
    }
    wire::Reader r(*payload);
    JitReply a;
    std::uint32_t status = 0;
    auto& t = a.timings;
    auto& s = a.stamps;
    const bool ok = r.u32(status, "status") && r.str(a.message, "message") &&
                    r.blob(a.binary, "binary") && r.str(a.build_log, "build_log") &&
                    r.u64(t.select_us, "select_us") && r.u64(t.context_us, "context_us") &&
                    r.u64(t.build_us, "build_us") && r.u64(t.warmup_us, "warmup_us") &&
                    r.u64(t.fetch_us, "fetch_us") && r.u64(t.validate_us, "validate_us") &&
                    r.u64(t.total_us, "total_us") && r.flag(a.warmed, "warmed") &&
                    r.str(a.warmup_note, "warmup_note") && r.flag(a.warm_pending, "warm_pending") &&
                    r.u32(a.helper_pid, "helper_pid") && r.u64(a.served, "served") &&
                    r.u64(s.started_ns, "started_ns") && r.u64(s.request_ns, "request_ns") &&
                    r.u64(s.reply_ns, "reply_ns");
    if (!ok) {
        return bad_frame("reply: " + r.error());
    }
    if (status > static_cast<std::uint32_t>(ReplyStatus::invalid_binary)) {
        return bad_frame("reply: unknown status " + std::to_string(status));
    }
    if (a.served == 0) {
        return bad_frame("reply: served is 0");
    }
    if (!r.at_end()) {
        return bad_frame("reply: trailing bytes after the last field");
    }
    a.status = static_cast<ReplyStatus>(status);
    return a;
}

}  // namespace kcache::compiler
