"""Peer for the FP8 attention kernel: cuDNN's FP8 SDPA forward (cudnn-frontend's Python graph,
`sdpa_fp8`: per-tensor e4m3 Q, K, V and O, P quantised by cuDNN, fp32 softmax statistics as the
LSE) at the Wan-14B self-attention shape (B = 1, H = 40, D = 128), on the inputs of
attention_fp8_bench (uniform q, k in ±2, v in ±1). The same timing rule as that bench: median of 5
CUDA-event timings after 2 warm-ups, the smallest over 3 rounds; TFLOP/s = 4·S²·D·H / t. cuDNN's
kernel alone is timed (the per-tensor quantisation is done once, outside). torch's bf16 SDPA
(cuDNN backend) on the same data is timed alongside, and the FP8 output's rel-L2 against it is
printed so that a fast wrong graph shows.
--sustain SECONDS adds "sustained_fp8_tflops": the FP8 graph run back to back for at least that long
between two events (the GPU at its power cap), as attention_fp8_bench --sustain does.
Usage: python cudnn_fp8_attention_bench.py [--sustain SECONDS] [S ...]   (default 75600). One JSON
line per shape.
Needs the nvidia-cudnn-frontend wheel (carried) and the cuDNN of torch's environment."""
import json, math, sys, time
import torch
import cudnn

H, D, B = 40, 128, 1
E4M3_MAX = 448.0


def median_ms(fn, warm=2, reps=5):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


def uniform(shape, amp, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return (torch.rand(shape, device="cuda", generator=g) * 2 - 1).mul_(amp).to(torch.bfloat16)


def quant(x):  # per-tensor e4m3: x·scale within ±448; returns (e4m3, descale)
    amax = x.abs().amax().float().clamp_min(1e-12)
    scale = E4M3_MAX / amax
    return (x.float() * scale).to(torch.float8_e4m3fn), (1.0 / scale).reshape(1, 1, 1, 1).contiguous()


def scalar(v):
    return torch.full((1, 1, 1, 1), float(v), device="cuda", dtype=torch.float32)


def main():
    args, sustain_s = sys.argv[1:], 0.0
    if "--sustain" in args:
        i = args.index("--sustain")
        sustain_s = float(args[i + 1])
        del args[i:i + 2]
    shapes = [int(a) for a in args] or [75600]
    handle = cudnn.create_handle()
    cudnn.set_stream(handle=handle, stream=torch.cuda.current_stream().cuda_stream)
    for S in shapes:
        t0 = time.time()
        q, k, v = uniform((B, S, H, D), 2.0, 1), uniform((B, S, H, D), 2.0, 2), uniform((B, S, H, D), 1.0, 3)
        q8, dq = quant(q)
        k8, dk = quant(k)
        v8, dv = quant(v)
        # O is at most max|v| in magnitude: its e4m3 scale maps that to 448.
        o_scale = E4M3_MAX / float(v.abs().amax())
        so, ds, ss = scalar(o_scale), scalar(1.0 / E4M3_MAX), scalar(E4M3_MAX)
        bshd = [S * H * D, D, H * D, 1]  # [B, H, S, D] view of the token-major [B, S, H, D] buffers
        g = cudnn.pygraph(io_data_type=cudnn.data_type.FP8_E4M3, intermediate_data_type=cudnn.data_type.FLOAT,
                          compute_data_type=cudnn.data_type.FLOAT, handle=handle)
        tq = g.tensor(name="q", dim=[B, H, S, D], stride=bshd, data_type=cudnn.data_type.FP8_E4M3)
        tk = g.tensor(name="k", dim=[B, H, S, D], stride=bshd, data_type=cudnn.data_type.FP8_E4M3)
        tv = g.tensor(name="v", dim=[B, H, S, D], stride=bshd, data_type=cudnn.data_type.FP8_E4M3)
        sc = {n: g.tensor(name=n, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=cudnn.data_type.FLOAT)
              for n in ("descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o")}
        o, stats, amax_s, amax_o = g.sdpa_fp8(q=tq, k=tk, v=tv, **sc, generate_stats=True,
                                              attn_scale=1.0 / math.sqrt(D), name="fp8_sdpa")
        o.set_output(True).set_dim([B, H, S, D]).set_stride(bshd).set_data_type(cudnn.data_type.FP8_E4M3)
        stats.set_output(True).set_dim([B, H, S, 1]).set_stride([H * S, S, 1, 1]).set_data_type(cudnn.data_type.FLOAT)
        amax_o.set_output(True).set_dim([1, 1, 1, 1]).set_stride([1, 1, 1, 1]).set_data_type(cudnn.data_type.FLOAT)
        g.validate()
        g.build_operation_graph()
        g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        g.check_support()
        g.build_plans()
        ws = torch.empty(g.get_workspace_size(), device="cuda", dtype=torch.uint8)
        o8 = torch.empty((B, S, H, D), device="cuda", dtype=torch.float8_e4m3fn)
        lse = torch.empty((B, H, S, 1), device="cuda", dtype=torch.float32)
        amax = torch.empty((1, 1, 1, 1), device="cuda", dtype=torch.float32)
        pack = {tq: q8, tk: k8, tv: v8, sc["descale_q"]: dq, sc["descale_k"]: dk, sc["descale_v"]: dv,
                sc["descale_s"]: ds, sc["scale_s"]: ss, sc["scale_o"]: so, o: o8, stats: lse, amax_o: amax}
        run_fp8 = lambda: g.execute(pack, ws, handle=handle)
        qh, kh, vh = (x.transpose(1, 2) for x in (q, k, v))  # [B, H, S, D] views for torch
        ob = torch.empty_like(q)
        def run_bf16():
            with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.CUDNN_ATTENTION]):
                ob.transpose(1, 2).copy_(torch.nn.functional.scaled_dot_product_attention(qh, kh, vh))
        t8 = t16 = 1e30
        for _ in range(3):
            t8 = min(t8, median_ms(run_fp8))
            t16 = min(t16, median_ms(run_bf16))
        sustained = {}
        if sustain_s > 0:
            calls = max(1, math.ceil(sustain_s * 1e3 / t8))
            s_, e_ = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s_.record()
            for _ in range(calls):
                run_fp8()
            e_.record(); torch.cuda.synchronize()
            ms = s_.elapsed_time(e_)
            sustained = {"sustained": {"seconds": round(ms * 1e-3, 2), "calls": calls,
                                       "fp8_tflops": round(4.0 * S * S * D * H * calls / ms * 1e-9, 1)}}
        run_fp8(); run_bf16(); torch.cuda.synchronize()
        of = o8.float() / o_scale
        rel = float((of - ob.float()).norm() / ob.float().norm())
        flop = 4.0 * S * S * D * H
        print(json.dumps({"bench": "cudnn_fp8_attention", "S": S, "H": H, "D": D, "cudnn_backend": cudnn.backend_version(),
                          "frontend": getattr(cudnn, "__version__", ""), "torch": torch.__version__,
                          "gpu": torch.cuda.get_device_name(), "fp8_ms": round(t8, 3),
                          "fp8_tflops": round(flop / t8 * 1e-9, 1), "bf16_cudnn_ms": round(t16, 3),
                          "bf16_cudnn_tflops": round(flop / t16 * 1e-9, 1), "fp8_vs_bf16_rel_l2": round(rel, 5),
                          "amax_o": float(amax.item()), "lse_finite": bool(torch.isfinite(lse).all()),
                          **sustained, "wall_s": round(time.time() - t0, 1)}), flush=True)
        del g, ws, o8, lse, q, k, v, q8, k8, v8, ob


if __name__ == "__main__":
    main()
