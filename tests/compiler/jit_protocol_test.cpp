// Compiler.*: the frame codec on its own (round trips and every check).

#include "kcache/compiler/jit_protocol.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "kcache/compiler/jit.hpp"

namespace kcache::compiler {
namespace {

JitRequest sample_request() {
    JitRequest q;
    q.device = {"Plat", "Dev", "1.2.3", 0x8086, std::string(32, 'a')};
    q.source = std::string("kernel void k() {}\0with nul", 28);
    q.options = "-cl-fast-relaxed-math";
    q.entry_points = {"k", "k2"};
    q.warmup = WarmupLaunch{2, {64, 32, 1}, {16, 8, 1}, 4096};
    q.warm_after_reply = true;
    q.address_space_cap = 1ull << 32;
    return q;
}

TEST(Compiler, RequestRoundTrips) {
    const JitRequest q = sample_request();
    auto back = decode_request(encode_request(q));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->device.device_name, "Dev");
    EXPECT_EQ(back->device.vendor_id, 0x8086u);
    EXPECT_EQ(back->source, q.source);
    EXPECT_EQ(back->entry_points, q.entry_points);
    ASSERT_TRUE(back->warmup.has_value());
    EXPECT_EQ(back->warmup->local[1], 8u);
    EXPECT_TRUE(back->warm_after_reply);
    EXPECT_EQ(back->address_space_cap, q.address_space_cap);
    EXPECT_EQ(back->build_stack_bytes, kDefaultBuildStack);
}

TEST(Compiler, ReplyRoundTrips) {
    JitReply a;
    a.status = ReplyStatus::build_error;
    a.message = "m";
    a.binary = std::string(
        "\x7f"
        "ELF\0\1",
        6);
    a.build_log = "log";
    a.timings.build_us = 42;
    a.warmed = true;
    a.warm_pending = true;
    auto back = decode_reply(encode_reply(a));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->status, ReplyStatus::build_error);
    EXPECT_EQ(back->binary, a.binary);
    EXPECT_EQ(back->timings.build_us, 42u);
    EXPECT_TRUE(back->warmed);
    EXPECT_TRUE(back->warm_pending);
}

// warm_after_reply travels only with a warm-up (it means nothing alone).
TEST(Compiler, WarmAfterReplyIsPartOfTheWarmup) {
    JitRequest q = sample_request();
    q.warmup.reset();
    auto back = decode_request(encode_request(q));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_FALSE(back->warm_after_reply);
    q.warmup = WarmupLaunch{};
    q.warm_after_reply = false;
    back = decode_request(encode_request(q));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_FALSE(back->warm_after_reply);
}

// A helper's clock stamps are its word: whatever they say (here the
// extremes of their range, the bytes of a fuzzed reply), the parent's
// timings stay within what it saw itself, with no arithmetic overflow.
TEST(Compiler, AReplysStampsCannotPushTimingsOutOfTheExchange) {
    using namespace std::chrono_literals;
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    const std::uint64_t extremes[][3] = {
        {kMax, kMax, 0}, {0, 0, kMax}, {1ull << 63, (1ull << 63) + 1, 0}, {kMax, 0, kMax}};
    for (const auto& s : extremes) {
        JitReply a;
        a.status = ReplyStatus::ok;
        a.binary = "bytes";
        a.stamps.started_ns = s[0];
        a.stamps.request_ns = s[1];
        a.stamps.reply_ns = s[2];
        RunResult run;
        run.outcome = ChildExit::exited;
        run.exit_code = 0;
        run.out = encode_reply(a);
        run.started = Clock::now();
        run.elapsed = 5ms;
        auto r = interpret_helper_run(run);
        ASSERT_TRUE(r.ok()) << r.error().message;
        const JitTimings& t = r->timings;
        EXPECT_EQ(t.wall, 5ms);
        for (auto part : {t.spawn, t.queued, t.transfer}) {
            EXPECT_GE(part, 0ns) << s[0] << " " << s[1] << " " << s[2];
            EXPECT_LE(part, t.wall) << s[0] << " " << s[1] << " " << s[2];
        }
    }
}

TEST(Compiler, EveryTruncationOfARequestIsRejected) {
    const std::string frame = encode_request(sample_request());
    for (std::size_t cut = 0; cut < frame.size(); ++cut) {
        auto cut_frame = decode_request(frame.substr(0, cut));
        ASSERT_FALSE(cut_frame.ok()) << "cut at " << cut;
        EXPECT_EQ(cut_frame.error().code, CompilerErrc::bad_frame) << "cut at " << cut;
    }
    EXPECT_FALSE(decode_request(frame + "x").ok());
}

TEST(Compiler, FrameHeaderChecksMagicVersionKindAndLength) {
    std::string frame = encode_request(sample_request());
    auto with_byte = [&](std::size_t at, char v) {
        std::string f = frame;
        f[at] = v;
        return decode_request(f);
    };
    EXPECT_NE(with_byte(0, 'X').error().message.find("magic"), std::string::npos);
    EXPECT_NE(with_byte(4, 9).error().message.find("version"), std::string::npos);
    EXPECT_NE(with_byte(8, 2).error().message.find("kind"), std::string::npos);
    EXPECT_NE(with_byte(19, 0x7f).error().message.find("exceeds"), std::string::npos);
    // A reply frame is not a request.
    EXPECT_FALSE(decode_request(encode_reply(JitReply{})).ok());
}

TEST(Compiler, FieldChecksNameTheField) {
    JitRequest q = sample_request();
    q.device.uuid_hex = "XYZ";
    EXPECT_NE(decode_request(encode_request(q)).error().message.find("uuid_hex"),
              std::string::npos);
    q = sample_request();
    q.warmup->work_dim = 4;
    EXPECT_NE(decode_request(encode_request(q)).error().message.find("work_dim"),
              std::string::npos);
    q = sample_request();
    q.entry_points = {""};
    EXPECT_NE(decode_request(encode_request(q)).error().message.find("entry point"),
              std::string::npos);
    q = sample_request();
    q.build_stack_bytes = 4096;
    EXPECT_NE(decode_request(encode_request(q)).error().message.find("build_stack_bytes"),
              std::string::npos);
}

// The first five words of a SPIR-V module (magic, version 1.2, generator,
// bound, schema), little-endian, and one more word.
std::string spirv_header() {
    return std::string("\x03\x02\x23\x07\x00\x02\x01\x00\x00\x00\x00\x00", 12) +
           std::string("\x10\x00\x00\x00\x00\x00\x00\x00\x11\x00\x02\x00", 12);
}

TEST(Compiler, AnIlPayloadRoundTripsAndEmptyMeansSource) {
    JitRequest q = sample_request();
    EXPECT_TRUE(decode_request(encode_request(q))->il.empty());
    q.il = spirv_header();
    auto back = decode_request(encode_request(q));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->il, q.il);
    EXPECT_EQ(back->source, q.source);
    EXPECT_EQ(back->options, q.options);
}

TEST(Compiler, AnIlPayloadThatIsNotSpirvIsRefusedByName) {
    JitRequest q = sample_request();
    q.il = "kernel void k() {}xx";  // 20 bytes, no magic number
    EXPECT_NE(decode_request(encode_request(q)).error().message.find("il is not a SPIR-V"),
              std::string::npos);
    q.il = spirv_header() + "x";  // not whole words
    EXPECT_NE(decode_request(encode_request(q)).error().message.find("SPIR-V module"),
              std::string::npos);
    q.il = spirv_header().substr(0, 16);  // shorter than the header
    EXPECT_FALSE(decode_request(encode_request(q)).ok());
}

// A link's units travel with their options and input headers; none is a
// build of the source.
TEST(Compiler, ALinksUnitsRoundTripWithTheirHeaders) {
    JitRequest q = sample_request();
    EXPECT_TRUE(decode_request(encode_request(q))->units.empty());
    q.units = {{"float f(float v) { return v; }", "-DA=1", {{"a.h", "#define A 2\n"}}},
               {"kernel void k() {}", "", {}}};
    auto back = decode_request(encode_request(q));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->units, q.units);
}

// A compile alone travels as such, with its one unit and no kernels to
// look for or launch.
TEST(Compiler, ACompileOnlyRoundTripsWithItsOneUnit) {
    JitRequest q = sample_request();
    EXPECT_FALSE(decode_request(encode_request(q))->compile_only);
    q.units = {{"float f(float v);\nkernel void k(global float* x) { x[0] = f(x[0]); }",
                "-DA=1",
                {{"a.h", "#define A 2\n"}}}};
    q.compile_only = true;
    EXPECT_NE(decode_request(encode_request(q)).error().message.find("compile_only"),
              std::string::npos)
        << "entry points and a warm-up";
    q.entry_points.clear();
    q.warmup.reset();
    auto back = decode_request(encode_request(q));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_TRUE(back->compile_only);
    EXPECT_EQ(back->units, q.units);
    q.units.push_back(q.units.front());
    EXPECT_NE(decode_request(encode_request(q)).error().message.find("compile_only"),
              std::string::npos)
        << "two units";
}

TEST(Compiler, ALinksUnitChecksNameTheField) {
    JitRequest q = sample_request();
    q.units = {{"", "", {}}};
    EXPECT_NE(decode_request(encode_request(q)).error().message.find("unit source"),
              std::string::npos);
    q.units = {{"kernel void k() {}", "", {{"", "text"}}}};
    EXPECT_NE(decode_request(encode_request(q)).error().message.find("header name"),
              std::string::npos);
    q.units = {{"kernel void k() {}", "", {}}};
    q.il = spirv_header();
    EXPECT_NE(decode_request(encode_request(q)).error().message.find("unit_count"),
              std::string::npos);
}

}  // namespace
}  // namespace kcache::compiler
