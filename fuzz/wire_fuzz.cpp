// The JIT helper's pipe frames in both directions: the request the helper
// reads (header check, then the payload) and the reply the parent reads
// (decode, then the mapping to a compile result). Fuzz input: one mode byte,
// then the frame. Mode bit 0 set: the harness writes a correct header in
// front of the rest (bit 1 picks reply over request), so mutations reach the
// payload grammar; clear: the rest is the whole frame, header included.
//
// Invariants: decoding never crashes or throws; the encoding is canonical,
// so a frame that decodes re-encodes to the same bytes; the helper's header
// check agrees with the full decoder.

#include <string>

#include "fuzz_support.hpp"
#include "kcache/compiler/jit.hpp"
#include "kcache/compiler/jit_protocol.hpp"
#include "kcache/compiler/subprocess.hpp"

namespace {

using namespace kcache::compiler;
using kcache::fuzz::check;

std::string with_header(std::uint32_t kind, const std::string& payload) {
    std::string out = "KCJT";
    auto put = [&](std::uint64_t v, int n) {
        for (int i = 0; i < n; ++i) {
            out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
        }
    };
    put(kProtocolVersion, 4);
    put(kind, 4);
    put(payload.size(), 8);
    return out + payload;
}

void request_side(const std::string& frame) {
    auto header = check_request_header(frame.substr(0, kFrameHeaderSize));
    auto request = decode_request(frame);
    if (!request) {
        check(!request.error().message.empty(), "a rejected request frame has no message");
        return;
    }
    check(header.ok(), "a request decodes but its header is rejected");
    check(*header == frame.size() - kFrameHeaderSize, "header length disagrees with the frame");
    check(encode_request(*request) == frame, "a decoded request does not re-encode to its frame");
}

void reply_side(const std::string& frame) {
    auto reply = decode_reply(frame);
    if (reply) {
        check(encode_reply(*reply) == frame, "a decoded reply does not re-encode to its frame");
    } else {
        check(!reply.error().message.empty(), "a rejected reply frame has no message");
    }
    // The parent's view of a helper that exited with this on its stdout.
    RunResult run;
    run.outcome = ChildExit::exited;
    run.exit_code = reply && reply->status == ReplyStatus::ok ? 0 : 1;
    run.out = frame;
    auto result = interpret_helper_run(run);
    if (result) {
        check(reply.ok() && reply->status == ReplyStatus::ok && !result->binary.empty(),
              "a compile result from a frame that is not a successful reply");
        // The helper's stamps never take a timing outside the exchange (run.elapsed: 0).
        const JitTimings& t = result->timings;
        check(t.spawn.count() == 0 && t.queued.count() == 0 && t.transfer.count() == 0,
              "a reply's stamps moved a timing outside the exchange");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    kcache::fuzz::Bytes in(data, size);
    const std::uint8_t mode = in.u8();
    std::string frame = in.rest();
    if (mode & 1) {
        frame = with_header((mode & 2) ? 2 : 1, frame);
    }
    request_side(frame);
    reply_side(frame);
    return 0;
}
