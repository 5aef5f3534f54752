#!/usr/bin/env python3
"""Compares kcache's kernels (run through the examples/ops library on the
GPU's OpenCL driver) with PyTorch on the same GPU, per op and dtype.

Usage: torch_compare.py OPS_DUMP WORKDIR
  Writes inputs and a case list to WORKDIR, runs OPS_DUMP (which computes
  every case through kcache on the OpenCL device and writes the outputs),
  computes the same cases with torch on CUDA in the same dtype (TF32 off),
  and prints one line per case plus a summary. Exit 1 if any case is out of
  tolerance or did not run on the device.

Tolerance per element: |ours - torch| <= atol + rtol * scale, where scale is
the largest |torch| of the case (sums of many terms round at that magnitude).
"""
import json
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

TOL = {"f32": (1e-5, 1e-4), "f16": (1e-3, 1e-2), "bf16": (1e-2, 2e-2)}  # (atol, rtol)
TORCH_DTYPE = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}

CONV_SHAPES = [
    # n, c, h, w, k, r, s, stride, pad, dil, groups, bias, relu
    (1, 3, 17, 19, 8, 3, 3, 1, 1, 1, 1, True, False),
    (2, 8, 15, 15, 16, 3, 3, 2, 1, 1, 1, True, True),
    (1, 6, 20, 20, 6, 3, 3, 1, 2, 2, 1, False, False),
    (1, 8, 13, 13, 8, 3, 3, 1, 1, 1, 8, True, True),    # depthwise
    (1, 8, 11, 9, 12, 5, 3, 2, 2, 1, 4, True, False),   # grouped
    (2, 16, 9, 9, 32, 1, 1, 1, 0, 1, 1, True, False),   # 1x1 pointwise
]
BN_SHAPES = [(2, 3, 37), (4, 16, 64), (1, 5, 1)]
DOT_LENGTHS = [1, 1000, 65537, 1 << 20]


def save(t, path):
    t.detach().to(torch.float32).contiguous().cpu().numpy().tofile(path)


def load(path):
    import numpy as np
    return torch.from_numpy(np.fromfile(path, dtype=np.float32))


def make_cases(work):
    g = torch.Generator().manual_seed(1234)
    cases = []

    def tensor(name, *shape, scale=1.0, positive=False):
        t = torch.randn(*shape, generator=g) * scale
        if positive:
            t = t.abs() + 0.5
        path = os.path.join(work, f"{name}.f32")
        save(t, path)
        return path

    for dt in ("f32", "f16", "bf16"):
        for i, (n, c, h, w, k, r, s, st, pd, dl, gr, bias, relu) in enumerate(CONV_SHAPES):
            tag = f"conv{i}_{dt}"
            cases.append({"op": "conv2d", "dtype": dt, "id": tag,
                          "shape": dict(n=n, c=c, h=h, w=w, k=k, r=r, s=s, stride=st, pad=pd,
                                        dil=dl, groups=gr),
                          "relu": relu,
                          "x": tensor(tag + "_x", n * c * h * w),
                          "w": tensor(tag + "_w", k * (c // gr) * r * s, scale=0.3),
                          "b": tensor(tag + "_b", k) if bias else "",
                          "out": os.path.join(work, tag + "_y.f32")})
        for i, (n, c, hw) in enumerate(BN_SHAPES):
            for mode in ("inference", "training"):
                if mode == "training" and n * hw == 1:
                    continue  # torch refuses one value per channel in training
                tag = f"bn{mode[0]}{i}_{dt}"
                case = {"op": "batchnorm_" + mode, "dtype": dt, "id": tag,
                        "shape": dict(n=n, c=c, hw=hw), "relu": i == 1, "eps": 1e-5,
                        "x": tensor(tag + "_x", n * c * hw, scale=2.0),
                        "gamma": tensor(tag + "_g", c), "beta": tensor(tag + "_be", c),
                        "out": os.path.join(work, tag + "_y.f32")}
                if mode == "inference":
                    case["mean"] = tensor(tag + "_m", c)
                    case["var"] = tensor(tag + "_v", c, positive=True)
                cases.append(case)
        for i, n in enumerate(DOT_LENGTHS):
            tag = f"dot{i}_{dt}"
            cases.append({"op": "dot", "dtype": dt, "id": tag, "n": n,
                          "x": tensor(tag + "_x", n), "y": tensor(tag + "_y", n),
                          "out": os.path.join(work, tag + "_r.f32")})
    return cases


def torch_result(case, dev):
    dt = TORCH_DTYPE[case["dtype"]]
    L = lambda key: load(case[key]).to(dev).to(dt)
    if case["op"] == "conv2d":
        sh = case["shape"]
        x = L("x").reshape(sh["n"], sh["c"], sh["h"], sh["w"])
        w = L("w").reshape(sh["k"], sh["c"] // sh["groups"], sh["r"], sh["s"])
        b = L("b") if case["b"] else None
        y = F.conv2d(x, w, b, stride=sh["stride"], padding=sh["pad"], dilation=sh["dil"],
                     groups=sh["groups"])
        return F.relu(y) if case["relu"] else y
    if case["op"].startswith("batchnorm"):
        sh = case["shape"]
        x = L("x").reshape(sh["n"], sh["c"], sh["hw"])
        g, b = load(case["gamma"]).to(dev), load(case["beta"]).to(dev)
        if case["op"] == "batchnorm_inference":
            m, v = load(case["mean"]).to(dev), load(case["var"]).to(dev)
            y = F.batch_norm(x.float(), m, v, g, b, training=False, eps=case["eps"]).to(dt)
        else:
            y = F.batch_norm(x.float(), None, None, g, b, training=True, eps=case["eps"]).to(dt)
        return F.relu(y) if case["relu"] else y
    x, y = L("x"), L("y")
    return torch.dot(x.float(), y.float()).to(dt).reshape(1)


def main():
    dump, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    cases = make_cases(work)
    with open(os.path.join(work, "cases.json"), "w") as f:
        json.dump(cases, f)
    run = subprocess.run([dump, os.path.join(work, "cases.json")], capture_output=True, text=True)
    sys.stderr.write(run.stderr)
    if run.returncode != 0:
        print(f"ops_dump failed with exit code {run.returncode}")
        return 1
    paths = {}
    for line in run.stdout.splitlines():
        if line.startswith("{"):
            rec = json.loads(line)
            paths[rec["id"]] = rec
    bad = 0
    worst = {}
    for case in cases:
        rec = paths.get(case["id"])
        ref = torch_result(case, dev).float().flatten().cpu()
        if rec is None or rec["backend"] != "device":
            print(f"FAIL {case['id']}: did not run on the device: {rec}")
            bad += 1
            continue
        ours = load(case["out"])
        atol, rtol = TOL[case["dtype"]]
        scale = float(ref.abs().max()) if ref.numel() else 0.0
        err = float((ours - ref).abs().max()) if ref.numel() else 0.0
        ok = ours.numel() == ref.numel() and err <= atol + rtol * scale
        key = (case["op"], case["dtype"])
        worst[key] = max(worst.get(key, 0.0), err / (scale or 1.0))
        if not ok:
            bad += 1
        print(f"{'ok  ' if ok else 'FAIL'} {case['id']:<14} {case['op']:<20} {case['dtype']:<4} "
              f"max|err|={err:.3g} scale={scale:.3g} rung={rec.get('rung')}")
    print("\nworst relative error (max|err| / max|torch|) per op and dtype:")
    for (op, dt), r in sorted(worst.items()):
        print(f"  {op:<20} {dt:<4} {r:.3g}   (tolerance rtol {TOL[dt][1]})")
    print(f"\n{len(cases) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
