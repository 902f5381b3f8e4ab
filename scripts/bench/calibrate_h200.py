#!/usr/bin/env python3
"""Derives the H200 profile of `vgen plan --predict` (recipes/hardware/h200.yaml) from the
project's own measurements in results/ and ../shared/device/README.md (one and two H200s).

  python3 scripts/bench/calibrate_h200.py            # print the derived numbers
  python3 scripts/bench/calibrate_h200.py --write    # also rewrite recipes/hardware/h200.yaml

Every number below names the file and field it comes from. Nothing is fitted to the two-GPU
forwards: they are the validation (tests/unit/test_predict.cpp, results/plan/2026-12-01_predict_validation.md).
The two-rank VAE decode (runs43-48 run 43) sets the parallel VAE's per-call cost, so its row there
is in-sample. The fp8 section comes from the kernel benchmarks alone (linear_fp8 and its row
quantisation, the e4m3 attention kernel and its quantisation pass); the fp8 DiT forwards of
results/dit/1xh200/2026-12-01_1xh200_fp8_dit.jsonl are its validation, not used here.
"""
import argparse
import json
import math
import os
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RES = os.path.join(ROOT, "results")
PEAK_BF16 = 989.4e12  # H200 SXM dense bf16 (same tensor cores as H100 SXM: 989.4 TFLOP/s)
PEAK_FP8 = 1978.9e12  # H200 SXM dense FP8 (datasheet: 3,958 TFLOP/s with sparsity)
HBM = 4.8e12          # H200 SXM HBM3e

# Wan2.1-14B shapes of the benchmarks (results/README.md): 40 layers, 40 heads x 128, ffn 13824.
L, D, F, TEXT = 40, 5120, 13824, 512
ELEMENTWISE_BYTES = 26.0  # lib/plan/time_model.cpp kElementwiseBytes


def load(name):
    with open(os.path.join(RES, name)) as f:
        return json.load(f)


def jsonl(name):
    with open(os.path.join(RES, name)) as f:
        return [json.loads(l) for l in f if l.strip()]


def attn_flops(q, k, heads=40, d=128):
    return 4.0 * q * k * heads * d


def vae_work(T, h, w, eb=2.0, split_w=True, base=96, mult=(1, 2, 4, 4), res=2, tdown=(False, True, True), z=16):
    """lib/plan/time_model.cpp vae_work, the same count: vgen's device decoder, one frame per call."""
    v = dict(flops=0.0, bytes=0.0, frame_bytes=0.0, spatial_convs=0.0, spatial_in_bytes=0.0, halo_bytes=0.0,
             attn_gathers=0.0, attn_gather_bytes=0.0, out_gathers=0.0, out_gather_bytes=0.0)
    nb = len(mult)
    d = [base * mult[-1]] + [base * m for m in reversed(mult)]
    tup = list(reversed(tdown))
    nr = res + 1
    st = dict(frames=float(T), H=float(h), W=float(w))

    def conv(cin, cout, kt, k, calls, fill):
        px = st["H"] * st["W"]
        i = px * cin * eb
        v["flops"] += 2 * cin * cout * kt * k * k * px * calls
        mem = 1.25 * i if fill == "upsample" else 2 * i
        if kt > 1:
            mem += 2 * (kt - 1) * i
        v["bytes"] += mem * calls
        if k > 1:
            v["spatial_convs"] += calls
            v["spatial_in_bytes"] += i * calls
            v["halo_bytes"] += (k - 1) // 2 * (st["H"] if split_w else st["W"]) * cin * eb * calls

    def add(c):
        v["bytes"] += 3 * st["H"] * st["W"] * c * eb * st["frames"]

    d0 = d[0]
    conv(z, d0, 3, 3, st["frames"], "copy")
    for _ in range(2):
        conv(d0, d0, 3, 3, st["frames"], "norm")
        conv(d0, d0, 3, 3, st["frames"], "norm")
        add(d0)
    px = st["H"] * st["W"]
    v["flops"] += st["frames"] * (2 * d0 * 3 * d0 * px + 4 * px * px * d0 + 2 * d0 * d0 * px)
    v["bytes"] += st["frames"] * 5 * px * d0 * eb
    v["attn_gathers"] += st["frames"]
    v["attn_gather_bytes"] += st["frames"] * px * 3 * d0 * eb
    for i in range(nb):
        cin_b = d[i] // 2 if i > 0 else d0
        out = d[i + 1]
        for r in range(nr):
            cin = cin_b if r == 0 else out
            if cin != out:
                v["flops"] += 2 * cin * out * st["H"] * st["W"] * st["frames"]
            conv(cin, out, 3, 3, st["frames"], "norm")
            conv(out, out, 3, 3, st["frames"], "norm")
            add(out)
        if i == nb - 1:
            conv(out, 8, 3, 3, st["frames"], "norm")
            px = st["H"] * st["W"]
            v["frame_bytes"] += st["frames"] * px * (8 * eb + 3 * 4)
            v["out_gathers"] += st["frames"]
            v["out_gather_bytes"] += st["frames"] * px * 8 * eb
            break
        if tup[i]:
            conv(out, 2 * out, 3, 1, st["frames"] - 1, "copy")
            st["frames"] = 1 + 2 * (st["frames"] - 1)
        st["H"] *= 2
        st["W"] *= 2
        conv(out, out // 2, 1, 3, st["frames"], "upsample")
    return v


def vae_seconds(v, P, side, eff, hbm, halo_us, p2p=(323e9, 10e-6), ag=(323e9, 15e-6)):
    """lib/plan/time_model.cpp's VAE decode time of the largest rank's part (links: h200.yaml)."""
    part = math.ceil(side / P) / side
    t = v["flops"] * part / (PEAK_BF16 * eff) + v["bytes"] * part / hbm
    t += v["frame_bytes"] * (1.0 if P > 1 else part) / hbm
    if P > 1:
        t += 2 * v["spatial_in_bytes"] * part / hbm
        t += 2 * (v["spatial_convs"] * p2p[1] + v["halo_bytes"] / p2p[0])
        t += v["spatial_convs"] * halo_us * 1e-6
        g = v["attn_gather_bytes"] + v["out_gather_bytes"]
        t += (v["attn_gathers"] + v["out_gathers"]) * ag[1] + g * (P - 1) / P / ag[0]
        t += 2 * g / hbm
    return t


def derive():
    out = {}
    r56 = load("dit/1xh200/2026-12-01_h200_issue7_runs56-61.json")["runs"]
    r43 = load("parallel/2xh200/2026-11-30_h200_issue7_runs43-48.json")
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
    # VAE: the decode benchmark at 480p and 720p (387c28e): its memory-bound passes at the elementwise
    # rate above, the convs' fraction of the peak by least squares over both shapes.
    hbm = HBM * out["elementwise"]
    vae = [(vae_work(21, 60, 104), 0.867), (vae_work(21, 90, 160), 1.970)]  # results/README.md "VAE decode"
    rest = [(v, t - (v["bytes"] + v["frame_bytes"]) / hbm) for v, t in vae]
    x = sum(v["flops"] * r for v, r in rest) / sum(v["flops"] ** 2 for v, r in rest)
    out["vae"] = round(1.0 / (x * PEAK_BF16), 4)
    out["vae_spatial_convs_720p"] = vae[1][0]["spatial_convs"]
    # Parallel VAE: the two-rank decode at 720p (width split) of runs43-48 run 43 against the model
    # without a per-call cost; what is left is shared by the decode's spatial conv calls (each does
    # two blocking sendrecv phases, the edge copies and a rendezvous of the two ranks).
    runs = r43["run43_issue9_scripts_on_two_gpus"]["vae_vs_one_rank"]
    two = [r["seconds"] for r in runs if r["ranks"] == 2 and r["split_dim"] == "width" and r["height"] == 720]
    v720 = vae_work(21, 90, 160)
    left = statistics.median(two) - vae_seconds(v720, 2, 160, out["vae"], hbm, 0.0)
    out["vae_halo_conv_us"] = round(left / v720["spatial_convs"] * 1e6, 1)
    # Host side: the cold-start jsonl (one H200, page cache warm).
    cold = jsonl("e2e/1xh200/2026-12-01_1xh200_issue21_cold_start.jsonl")
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
    out.update(derive_fp8(out["attention_by_gflop"]))
    return out


FP8_ATTENTION_KERNEL_COMMITS = {"d672760"}


def derive_fp8(bf16_attention):
    """precision fp8 (docs/fp8.md): fractions of the fp8 peak and of the HBM from the kernel benchmarks."""
    out = {}
    # Block linears, results/gemm/1xh200/2026-12-01_1xh200_fp8_gemm.jsonl (linear_fp8, cuBLASLt outer-vector
    # scales): per layer six [M, 5120] x [5120, 5120] GEMMs (attn1 q/k/v/o, attn2 q/o), ffn1
    # [5120 -> 13824] with GELU, ffn2 [13824 -> 5120]; the layer's FLOPs over the sum of the
    # measured times, at each M benchmarked. Below the smallest M the curve is flat (no measurement).
    g = [r["result"] for r in jsonl("gemm/1xh200/2026-12-01_1xh200_fp8_gemm.jsonl") if r["result"].get("bench") == "gemm_fp8"]
    gemm, qbytes, qsec = [], 0.0, 0.0
    for M in sorted({r["M"] for r in g}):
        by = {(r["N"], r["K"]): r for r in g if r["M"] == M}
        sq, ffn1, ffn2 = by[(D, D)], by[(F, D)], by[(D, F)]
        t = 6 * sq["fp8_ms"] + ffn1["fp8_ms"] + ffn2["fp8_ms"]
        flops = M * (12.0 * D * D + 4.0 * D * F)
        gemm.append([M, round(flops / (t * 1e-3) / PEAK_FP8, 4)])
        # quantize_rows_fp8 before each: one for q/k/v, o, attn2 q, attn2 o, ffn1 (K = 5120), ffn2
        # (K = 13824); 3 bytes per element (bf16 read, e4m3 written); quant_ms as measured.
        qbytes += 3.0 * M * (5 * D + F)
        qsec += (5 * sq["quant_ms"] + ffn2["quant_ms"]) * 1e-3
    out["fp8_gemm_by_rows"] = gemm
    out["fp8_gemm_quant"] = round(qbytes / qsec / HBM, 4)
    # Self-attention, results/attention/1xh200/2026-12-01_1xh200_fp8_attention.jsonl: the e4m3 kernel alone
    # (fp8_kernel_tflops) at 32,760 and 75,600 tokens x 40 heads x 128, the newest record of each
    # length with no exponential replaced (the kept kernel); its quantisation pass (fp8_quant_ms)
    # priced per element of q, k and v: 3 bytes each (bf16 read, e4m3 written), as a fraction of
    # the HBM rate it reaches.
    # Only the kernel and quantisation pass that the fp8 DiT validation forwards ran (d672760: the
    # kernel of 56b944f, the pass of d672760), from the call that timed those forwards (its records
    # name "the committed state"); the variants measured and dropped are not used.
    a = [r for r in jsonl("attention/1xh200/2026-12-01_1xh200_fp8_attention.jsonl") if "fp8_kernel_tflops" in r["result"]]
    a = [r for r in a if r["commit"] in FP8_ATTENTION_KERNEL_COMMITS and "the committed state" in r["args"]]
    a = [r for r in a if "EXP_POLY" not in r["args"] or "EXP_POLY=0 " in r["args"]]
    newest = {}
    for r in a:  # in file order: the later record of a length wins
        newest[r["result"]["S"]] = r["result"]
    att, qb, qs = [], 0.0, 0.0
    for S in sorted(newest):
        x = newest[S]
        att.append([round(attn_flops(S, S, x["H"], x["D"]) / 1e9, 1), round(x["fp8_kernel_tflops"] * 1e12 / PEAK_FP8, 4)])
        qb += 3 * 3.0 * S * x["H"] * x["D"]
        qs += x["fp8_quant_ms"] * 1e-3
    # Below the smallest measured call (many-GPU meshes: fewer heads or shorter chunks per call) the
    # e4m3 kernel is assumed to lose what the bf16 Hopper kernel loses there (attention_by_gflop),
    # down to its smallest point: not measured in fp8.
    (x0, y0), (x1, y1) = bf16_attention[0], bf16_attention[1]
    assert x1 == att[0][0], (x1, att[0])
    out["fp8_attention_by_gflop"] = [[x0, round(att[0][1] * y0 / y1, 4)]] + att
    out["fp8_attention_quant"] = round(qb / qs / HBM, 4)
    return out


TEMPLATE = """# H200 SXM (141 GB, NVLink 4, 700 W cap), derived by scripts/bench/calibrate_h200.py from results/
# and ../shared/device/README.md; do not edit the derived numbers by hand: rerun the script.
name: h200
gpu: NVIDIA H200 SXM 141GB
detect: ["H200"]            # words of the CUDA device name that pick this profile
nvlink_domain: 8            # HGX H200: 8 GPUs on NVSwitch (NVIDIA HGX H200 specification)
memory_gib: 140.4           # 143,771 MiB (../shared/device/README.md)
peak:
  bf16_tflops: 989.4        # dense, H200 SXM datasheet (same tensor cores as H100 SXM)
  fp8_tflops: 1978.9        # dense, H200 SXM datasheet
  fp32_tflops: 66.9         # non-tensor FP32, H200 SXM datasheet
  hbm_tbps: 4.8             # H200 SXM datasheet
efficiency:
  # [rows M, fraction of bf16 peak]: results/parallel/2xh200/2026-11-30_h200_issue7_runs43-48.json run45 profile
  # (747 TFLOP/s at 75,600 rows); flat below (no measurement)
  gemm_by_rows: {gemm_by_rows}
  # [GFLOP per call, fraction]: the Hopper kernel, results/dit/1xh200/2026-12-01_h200_issue7_runs56-61.json (480p,
  # 720p); the smallest point is the in-model cross-attention of the run45 profile
  attention_by_gflop: {attention_by_gflop}
  # cuDNN: run45 profile (720p in the model) and runs56-61 run 56 (480p, one call)
  attention_cudnn_by_gflop: {attention_cudnn_by_gflop}
  elementwise: {elementwise}       # run45 profile "other" phase over the modelled bytes
  vae: {vae}               # convs: results/vae/1xh200/2026-11-30_h200_issue7_bench_387c28e.json VAE 480p / 720p less the memory passes
fp8:                        # precision fp8 (docs/fp8.md): the e4m3 block linears and self-attention
  # [rows M, fraction of fp8 peak]: linear_fp8 over a layer's GEMM mix (6 x 5120^2, ffn1, ffn2),
  # results/gemm/1xh200/2026-12-01_1xh200_fp8_gemm.jsonl; flat below 32,760 rows (no measurement)
  gemm_by_rows: {fp8_gemm_by_rows}
  # quantize_rows_fp8 before the GEMMs: fraction of hbm_tbps at 3 bytes per element, same file
  gemm_quant: {fp8_gemm_quant}
  # [GFLOP per call, fraction of fp8 peak]: the e4m3 kernel, results/attention/1xh200/2026-12-01_1xh200_fp8_attention.jsonl
  # (32,760 and 75,600 tokens); the smallest point assumes the bf16 kernel's fall-off (attention_by_gflop)
  attention_by_gflop: {fp8_attention_by_gflop}
  # the attention's quantisation pass over q, k, v: fraction of hbm_tbps at 3 bytes per element, same file
  attention_quant: {fp8_attention_quant}
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
parallel_vae:
  halo_conv_us: {vae_halo_conv_us}        # results/parallel/2xh200/2026-11-30_h200_issue7_runs43-48.json run 43 (two ranks, 720p) over the model without it
host:
  loader_gbps: {loader_gbps}         # results/e2e/1xh200/2026-12-01_1xh200_issue21_cold_start.jsonl, load_bytes_read / load_seconds
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
