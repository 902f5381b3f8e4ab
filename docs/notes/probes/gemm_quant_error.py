#!/usr/bin/env python3
"""Probe: the output error of one block-linear GEMM y = x·W with both operands quantised, e4m3 (the
fp8 GEMMs of precision fp8) against INT8 (W8A8: rint(x·127/amax), symmetric), each with a scale per
token of x and per output channel of W, as docs/fp8.md prescribes for the fp8 GEMMs. Synthetic
data at the 14B block shapes' K: Gaussian x (the normalised inputs of q/k/v/o and ffn1), GELU of a
Gaussian (ffn2's input), and Gaussian x with 1% of its channels 20x larger (outlier channels, as
trained LLM activations have; where per-token INT8 loses its bits). Fan-in Gaussian W.

Usage: gemm_quant_error.py [--json FILE]   (numpy; CPU, ~10 s)
Recorded in results/fp8_accuracy/cpu/2026-12-02_cpu_gemm_quant_error.json."""
import argparse
import datetime
import json
import subprocess

import numpy as np


def e4m3(x):
    """Round to e4m3 (RNE; 3 mantissa bits, normals from 2^-6, subnormal step 2^-9, max 448)."""
    e = np.maximum(np.floor(np.log2(np.maximum(np.abs(x), 2.0**-9))), -6)
    step = 2.0 ** (e - 3)
    return np.clip(np.round(x / step) * step, -448, 448)


def quant(x, axis, fmt):
    amax = np.abs(x).max(axis=axis, keepdims=True)
    amax = np.where(amax > 0, amax, 1.0)
    if fmt == "e4m3":
        s = amax / 448.0
        return e4m3(x / s) * s
    s = amax / 127.0
    return np.clip(np.round(x / s), -127, 127) * s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    M, N = 512, 512
    cases = {}
    for name, K in (("gaussian", 5120), ("gelu", 13824), ("outlier_channels", 5120)):
        h = rng.standard_normal((M, K))
        if name == "gelu":
            x = 0.5 * h * (1 + np.tanh(0.7978845608 * (h + 0.044715 * h**3)))
        elif name == "outlier_channels":
            x = h.copy()
            x[:, rng.choice(K, K // 100, replace=False)] *= 20.0
        else:
            x = h
        w = rng.standard_normal((K, N)) / np.sqrt(K)
        y = x @ w
        row = {"K": K}
        for fmt in ("e4m3", "int8"):
            both = quant(x, 1, fmt) @ quant(w, 0, fmt)
            act = quant(x, 1, fmt) @ w
            row[fmt] = {
                "rel_l2_both": float(np.linalg.norm(both - y) / np.linalg.norm(y)),
                "rel_l2_activation_only": float(np.linalg.norm(act - y) / np.linalg.norm(y)),
            }
        cases[name] = row
        print(f"{name:17s} K={K:5d}  e4m3 {row['e4m3']['rel_l2_both']:.4f}  int8 {row['int8']['rel_l2_both']:.4f}"
              f"  (activation alone: e4m3 {row['e4m3']['rel_l2_activation_only']:.4f},"
              f" int8 {row['int8']['rel_l2_activation_only']:.4f})")
    if args.json:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        rec = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "gpu": "none (CPU, numpy)",
               "commit": commit, "suite": "gemm_quant_error", "args": f"M={M} N={N}, seed 0",
               "result": cases}
        with open(args.json, "w") as f:
            json.dump(rec, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
