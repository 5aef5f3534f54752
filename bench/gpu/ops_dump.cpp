// ops_dump CASES.json: runs every case of the list (written by
// torch_compare.py) through the examples/ops library — so through kcache on
// the OpenCL device — writes each output as raw f32 and prints one JSON line
// per case saying which path ran. Exit 0 when every case could be attempted.

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "ops/ops.hpp"

namespace {

using nlohmann::json;

std::vector<float> read_f32(const std::string& path) {
    std::vector<float> v;
    if (path.empty()) {
        return v;
    }
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) {
        throw std::runtime_error("cannot read " + path);
    }
    v.resize(static_cast<std::size_t>(in.tellg()) / sizeof(float));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
    return v;
}

void write_f32(const std::string& path, const std::vector<float>& v) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
    if (!out) {
        throw std::runtime_error("cannot write " + path);
    }
}

ops::DType dtype_of(const std::string& s) {
    auto d = kcache::kernels::parse_dtype(s);
    if (!d) {
        throw std::runtime_error("unknown dtype " + s);
    }
    return *d;
}

ops::Result<ops::Output> run_case(ops::Context& ctx, const json& c) {
    auto dt = dtype_of(c.at("dtype"));
    auto act = c.value("relu", false) ? ops::Activation::relu : ops::Activation::none;
    const std::string op = c.at("op");
    if (op == "conv2d") {
        const auto& s = c.at("shape");
        ops::Conv2dShape sh;
        sh.n = s.at("n"), sh.c = s.at("c"), sh.h = s.at("h"), sh.w = s.at("w");
        sh.k = s.at("k"), sh.r = s.at("r"), sh.s = s.at("s");
        sh.stride_h = sh.stride_w = s.at("stride");
        sh.pad_h = sh.pad_w = s.at("pad");
        sh.dil_h = sh.dil_w = s.at("dil");
        sh.groups = s.at("groups");
        auto x = read_f32(c.at("x")), w = read_f32(c.at("w")), b = read_f32(c.at("b"));
        return ops::conv2d(ctx, sh, x, w, b, act, dt);
    }
    if (op == "dot") {
        auto x = read_f32(c.at("x")), y = read_f32(c.at("y"));
        return ops::dot(ctx, x, y, c.at("n"), 1, dt);
    }
    const auto& s = c.at("shape");
    ops::BatchnormShape sh{s.at("n"), s.at("c"), s.at("hw")};
    auto x = read_f32(c.at("x")), g = read_f32(c.at("gamma")), be = read_f32(c.at("beta"));
    float eps = c.at("eps");
    if (op == "batchnorm_training") {
        auto r = ops::batchnorm_training(ctx, sh, x, g, be, eps, act, dt);
        if (!r) {
            return kcache::fail(r.error());
        }
        return ops::Output{std::move(r->values), r->path};
    }
    auto m = read_f32(c.at("mean")), v = read_f32(c.at("var"));
    ops::BatchnormParams p{m, v, g, be, eps};
    return ops::batchnorm_inference(ctx, sh, x, p, act, dt);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: ops_dump CASES.json\n");
        return 2;
    }
    try {
        std::ifstream in(argv[1]);
        json cases = json::parse(in);
        auto ctx = ops::Context::create();
        std::fprintf(stderr, "ops_dump: device: %s\n", ctx.device_name().c_str());
        for (const auto& c : cases) {
            auto r = run_case(ctx, c);
            json line = {{"id", c.at("id")}};
            if (!r) {
                line["backend"] = "error";
                line["message"] = r.error().message;
            } else {
                write_f32(c.at("out"), r->values);
                line["backend"] = ops::to_string(r->path.backend);
                line["rung"] = kcache::to_string(r->path.rung);
                line["path"] = r->path.describe();
            }
            std::cout << line.dump() << "\n";
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ops_dump: %s\n", e.what());
        return 1;
    }
    return 0;
}
