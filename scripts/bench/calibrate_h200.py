#!/usr/bin/env python3
"""Derives the H200 profile of `vgen plan --predict` (recipes/hardware/h200.yaml) from the
project's own measurements in results/ and ../shared/device/README.md (one and two H200s).

  python3 scripts/bench/calibrate_h200.py            # print the derived numbers
  python3 scripts/bench/calibrate_h200.py --write    # also rewrite recipes/hardware/h200.yaml

Every number below names the file and field it comes from. Nothing is fitted to the two-GPU
forwards: they are the validation (tests/unit/test_predict.cpp, results/2026-12-01_predict_validation.md).
"""
import argparse
import json
import math
import os
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RES = os.path.join(ROOT, "results")
PEAK_BF16 = 989.4e12  # H200 SXM dense bf16 (same tensor cores as H100 SXM: 989.4 TFLOP/s)
HBM = 4.8e12          # H200 SXM HBM3e

# Wan2.1-14B shapes of the benchmarks (results/README.md): 40 layers, 40 heads x 128, ffn 13824.
L, D, F, TEXT = 40, 5120, 13824, 512
ELEMENTWISE_BYTES = 26.0  # lib/pipeline/predict.cpp kElementwiseBytes


def load(name):
    with open(os.path.join(RES, name)) as f:
        return json.load(f)


def jsonl(name):
    with open(os.path.join(RES, name)) as f:
        return [json.loads(l) for l in f if l.strip()]


def attn_flops(q, k, heads=40, d=128):
    return 4.0 * q * k * heads * d


def vae_flops_per_pixel(base=96, mult=(1, 2, 4, 4), res=2, tdown=(False, True, True)):
    # lib/pipeline/predict.cpp vae_flops_per_pixel, the same formula.
    n = len(mult)
    ch = [base * m for m in reversed(mult)]
    t = 1.0
    for x in tdown:
        t /= 2.0 if x else 1.0
    area = 1.0 / 4 ** (n - 1)
    conv = 54.0
    f = 2 * 2 * conv * ch[0] ** 2 * area * t
    for i in range(n):
        f += (res + 1) * 2 * conv * ch[i] ** 2 * area * t
        if i < n - 1:
            ti = len(tdown) - 1 - i
            if 0 <= ti < len(tdown) and tdown[ti]:
                t *= 2.0
            area *= 4.0
            f += 2.0 * 9.0 * ch[i] * ch[min(i + 1, n - 1)] * area * t
    return f + 54.0 * ch[n - 1] * 3.0


def derive():
    out = {}
    r56 = load("2026-12-01_h200_issue7_runs56-61.json")["runs"]
    r43 = load("2026-11-30_h200_issue7_runs43-48.json")
    prof = r43["run45_profile_720p_10_layers"]
    ph = prof["phases_seconds"]
    # GEMM: the phase profile of 10 layers at 720p (747 TFLOP/s at 75,600 rows); no measurement
    # below 32,760 rows, so the curve is flat there (an assumption the table states).
    gemm_eff = prof["gemm_tflops"] * 1e12 / PEAK_BF16
    out["gemm_by_rows"] = [[4096, round(gemm_eff, 4)], [75600, round(gemm_eff, 4)]]
    # Attention, the Hopper kernel (backend auto): isolated calls at 480p and 720p, ms per call.
    ms720 = 188.1  # results/README.md "after the review fixes", runs56-61 run 62
    ms480 = r56["59"]["480p_ms"]["v6"]  # the kept variant, 35.16 ms
    cross_eff = prof["cross_attention_tflops"] * 1e12 / PEAK_BF16
    cross_gflop = attn_flops(75600, TEXT) / 1e9
    e480 = attn_flops(32760, 32760) / (ms480 * 1e-3) / PEAK_BF16
    e720 = attn_flops(75600, 75600) / (ms720 * 1e-3) / PEAK_BF16
    out["attention_by_gflop"] = [[round(cross_gflop, 1), round(cross_eff, 4)],
                                 [round(attn_flops(32760, 32760) / 1e9, 1), round(e480, 4)],
                                 [round(attn_flops(75600, 75600) / 1e9, 1), round(e720, 4)]]
    # cuDNN (backend cudnn; the two-GPU runs of 0717f68): the in-model self-attention of the
    # profile at 720p and the one-call 480p time (runs56-61 run 56: cudnn 38.0 ms).
    c720 = prof["self_attention_tflops"] * 1e12 / PEAK_BF16
    c480 = attn_flops(32760, 32760) / 38.0e-3 / PEAK_BF16
    out["attention_cudnn_by_gflop"] = [[round(cross_gflop, 1), round(cross_eff, 4)],
                                       [round(attn_flops(32760, 32760) / 1e9, 1), round(c480, 4)],
                                       [round(attn_flops(75600, 75600) / 1e9, 1), round(c720, 4)]]
    # Elementwise: the profile's "other" phase over the bytes the model counts.
    other = ph["other"] / 10 * L
    out["elementwise"] = round(L * ELEMENTWISE_BYTES * 75600 * D / other / HBM, 4)
    # VAE: the decode benchmark at 480p and 720p (387c28e), least squares over both.
    b387 = load("2026-11-30_h200_issue7_bench_387c28e.json")
    vae = [(480 * 832 * 81, 0.867), (720 * 1280 * 81, 1.970)]  # results/README.md "VAE decode"
    fpp = vae_flops_per_pixel()
    rate = sum(p * fpp * t for p, t in vae) / sum(t * t for p, t in vae)
    out["vae"] = round(rate / PEAK_BF16, 4)
    out["vae_flops_per_pixel"] = fpp
    # Host side: the cold-start jsonl (one H200, page cache warm).
    cold = jsonl("2026-12-01_1xh200_issue21_cold_start.jsonl")
    vg = [r for r in cold if r["impl"] == "vgen"]
    loads = [r["result"] for r in vg if r["suite"] == "load" and r["result"].get("load_seconds", 0) < 4]
    out["loader_gbps"] = round(statistics.median(x["load_bytes_read"] / x["load_seconds"] for x in loads) / 1e9, 2)
    e2e = [r["result"] for r in vg if r["suite"] == "e2e" and r["result"].get("vae_decode_seconds", 9) < 3]
    px480 = 480 * 832 * 81
    vae_pipe = statistics.median(x["vae_decode_seconds"] for x in e2e)
    out["frame_mpix_per_s"] = round(px480 / 1e6 / (vae_pipe - 0.867), 1)
    out["mp4_mpix_per_s"] = round(px480 / 1e6 / statistics.median(x["mp4_encode_seconds"] for x in e2e), 1)
    te_flops = 2 * (5.68e9 - 256384 * 4096) * TEXT + 4.0 * 24 * TEXT * TEXT * 4096
    te_flops += 2.0 * TEXT * (4096 * D + D * D) + L * 4.0 * TEXT * D * D
    te = statistics.median(x["text_encode_seconds"] for x in e2e)
    out["text_fixed_s"] = round(te - 2 * te_flops / (PEAK_BF16 * gemm_eff), 4)
    # The pipeline's forward over the benchmark's: 4 CFG steps = 8 forwards (97821fd) against the
    # 480p benchmark forward (348b122, runs56-61 run 61).
    bench480 = statistics.median(v["seconds"] for v in r56["61"]["vgen"] if v["tokens"] == 32760)
    den = statistics.median(x["denoise_seconds"] for x in e2e)
    out["forward_overhead"] = round(den / 8 / bench480, 4)
    # Links: ../shared/device/README.md (two H200s, NV18): NCCL all-reduce bus bandwidth 323 GB/s,
    # cudaMemcpyPeerAsync 391 GB/s.
    out["nccl_gbps"] = 323.0
    out["copy_engine_gbps"] = 391.0
    return out


TEMPLATE = """# H200 SXM (141 GB, NVLink 4, 700 W cap), derived by scripts/bench/calibrate_h200.py from results/
# and ../shared/device/README.md; do not edit the derived numbers by hand: rerun the script.
name: h200
gpu: NVIDIA H200 SXM 141GB
nvlink_domain: 8            # HGX H200: 8 GPUs on NVSwitch (NVIDIA HGX H200 specification)
memory_gib: 140.4           # 143,771 MiB (../shared/device/README.md)
peak:
  bf16_tflops: 989.4        # dense, H200 SXM datasheet (same tensor cores as H100 SXM)
  fp8_tflops: 1978.9        # dense, H200 SXM datasheet
  fp32_tflops: 66.9         # non-tensor FP32, H200 SXM datasheet
  hbm_tbps: 4.8             # H200 SXM datasheet
efficiency:
  # [rows M, fraction of bf16 peak]: results/2026-11-30_h200_issue7_runs43-48.json run45 profile
  # (747 TFLOP/s at 75,600 rows); flat below (no measurement)
  gemm_by_rows: {gemm_by_rows}
  # [GFLOP per call, fraction]: the Hopper kernel, 2026-12-01_h200_issue7_runs56-61.json (480p,
  # 720p); the smallest point is the in-model cross-attention of the run45 profile
  attention_by_gflop: {attention_by_gflop}
  # cuDNN: run45 profile (720p in the model) and runs56-61 run 56 (480p, one call)
  attention_cudnn_by_gflop: {attention_cudnn_by_gflop}
  elementwise: {elementwise}       # run45 profile "other" phase over the modelled bytes
  vae: {vae}               # 2026-11-30_h200_issue7_bench_387c28e.json VAE 480p / 720p
links:
  intra:                    # NVLink 4 through NVSwitch
    all_to_all: {{gbps: {nccl_gbps}, latency_us: 15}}   # gbps: NCCL all-reduce bus bandwidth, 2 GPUs (device README); latency: not measured
    all_gather: {{gbps: {nccl_gbps}, latency_us: 15}}
    p2p: {{gbps: {nccl_gbps}, latency_us: 10}}
    copy_engine: {{gbps: {copy_engine_gbps}, latency_us: 5}}  # cudaMemcpyPeerAsync pull (device README)
  inter:                    # 400 Gb/s NDR InfiniBand per GPU (ConnectX-7, HGX H200 reference design)
    all_to_all: {{gbps: 50, latency_us: 25}}
    all_gather: {{gbps: 50, latency_us: 25}}
    p2p: {{gbps: 50, latency_us: 15}}
    copy_engine: {{gbps: 50, latency_us: 15}}
host:
  loader_gbps: {loader_gbps}         # 2026-12-01_1xh200_issue21_cold_start.jsonl, load_bytes_read / load_seconds
  mp4_mpix_per_s: {mp4_mpix_per_s}     # same file, mp4_encode_seconds (the background writer's tail)
  frame_mpix_per_s: {frame_mpix_per_s}     # same file, vae_decode_seconds minus the decode benchmark
  text_fixed_s: {text_fixed_s}       # same file, text_encode_seconds minus the encoder's FLOPs
  forward_overhead: {forward_overhead}    # same file, denoise_seconds / 8 over the 480p benchmark forward
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    a = ap.parse_args()
    d = derive()
    for k, v in d.items():
        print(f"{k}: {v}")
    if a.write:
        path = os.path.join(ROOT, "recipes", "hardware", "h200.yaml")
        with open(path, "w") as f:
            f.write(TEMPLATE.format(**d))
        print("wrote", path)


if __name__ == "__main__":
    main()
