#!/usr/bin/env python3
"""Peer baseline of Cosmos 3 on one GPU: diffusers (Cosmos3OmniTransformer, Cosmos3OmniPipeline) in bf16.

Modes (one per call; each prints one JSON line per measurement, also appended to --out):
  dit       Cosmos3OmniTransformer of --config (a transformer config.json or its directory; default
            recipes/models/cosmos3-nano/transformer), --layers overriding num_hidden_layers, random
            bf16 weights N(0, 0.02^2) (norm weights 1; time_embedder fp32, as from_pretrained keeps
            it), or --model DIR's transformer (from_pretrained). One measurement is one CFG step as
            the pipeline runs it: the conditional forward over [--prompt-tokens | video] and the
            unconditional one over [--uncond-tokens | video], each a whole forward (the understanding
            tower over the prompt recomputed, the generation tower, proj_in/out, patchify), inputs
            packed by the pipeline's own _prepare_text_segment / _prepare_vision_segment (mRoPE ids
            with fps modulation at --fps), random token ids, N(0, 1) latents [1, 48, T, H/16, W/16]
            (T = (F - 1) / 4 + 1) at --shapes (720p = 720x1280x189, or HxWxF), timestep 500
  pipeline  load + one video: Cosmos3OmniPipeline.from_pretrained(--model, bf16).to(device), then
            pipe(prompt, negative_prompt "", height, width, num_frames, steps, guidance, fps,
            output_type "np"); the scheduler as --flow-shift says (default 10: flow sigmas at shift
            10, as recipes/1gpu-cosmos3-nano-720p.yaml and diffusers' Cosmos 3 examples; 0 keeps the
            checkpoint's); nothing written. Each step's end time (callback_on_step_end, synchronised)
            gives step_seconds

Timing: dit takes the median of --reps CUDA-event timings after --warmup untimed runs (seconds: one
CFG step, both forwards; cond_seconds and uncond_seconds each forward alone); pipeline the host clock
up to torch.cuda.synchronize() (load_seconds, render_seconds, wall from the process start). --device
cpu and small --shapes/--layers run both modes on the CPU as a smoke test (host clock; the numbers
mean nothing there).

  python3 diffusers_cosmos3_bench.py dit --shapes 720p --layers 8
  python3 diffusers_cosmos3_bench.py pipeline --model DIR --height 720 --width 1280 --frames 189 \
      --steps 35 --guidance 6
"""
import argparse
import json
import os
import sys
import time
import types

T_START = time.perf_counter()
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DEFAULT_CONFIG = os.path.join(ROOT, "recipes/models/cosmos3-nano/transformer")
PROMPT = "a red fox running through fresh snow at dawn"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diffusers_i2v_bench import Clock, emit, keep_fp32, load_config, peak_gib, reset_peak  # noqa: E402


def parse_shape(s):
    if s == "720p":
        return 720, 1280, 189
    try:
        h, w, f = (int(x) for x in s.split("x"))
    except ValueError:
        sys.exit("diffusers_cosmos3_bench.py: bad shape %r (720p or HxWxF)" % s)
    return h, w, f


def build_random(torch, cfg, device):
    """Cosmos3OmniTransformer of cfg in bf16 on `device` without an fp32 copy: built on meta, cast there,
    then materialised and filled."""
    from diffusers import Cosmos3OmniTransformer
    from diffusers.models.transformers.transformer_cosmos3 import Cosmos3VLTextRotaryEmbedding
    import inspect
    known = inspect.signature(Cosmos3OmniTransformer.__init__).parameters
    with torch.device("meta"):
        m = Cosmos3OmniTransformer(**{k: v for k, v in cfg.items() if k in known})
    m = m.to(torch.bfloat16).to_empty(device=device)
    with torch.no_grad():
        for n, p in m.named_parameters():
            if p.ndim == 1 and n.endswith(".weight") and "norm" in n.split(".")[-2]:
                p.fill_(1.0)
            else:
                p.normal_(0, 0.02)
    keep_fp32(torch, m)
    c = m.config  # the rope's inv_freq is a buffer computed in __init__ (meta there)
    with torch.device(device):
        m.rotary_emb = Cosmos3VLTextRotaryEmbedding(c.head_dim, c.rope_theta, tuple(c.rope_axes_dim))
    return m.eval()


def packed_inputs(torch, m, n_ids, latents, fps, device, seed):
    """The transformer's keyword arguments for one prompt of n_ids random ids, as the pipeline packs them."""
    from diffusers import Cosmos3OmniPipeline as P
    pipe = types.SimpleNamespace(transformer=m, vae_scale_factor_temporal=4)
    g = torch.Generator(device="cpu").manual_seed(seed)
    ids = torch.randint(0, m.config.vocab_size, (n_ids,), generator=g).tolist()
    text = P._prepare_text_segment(pipe, ids, device=device)
    vis = P._prepare_vision_segment(pipe, input_vision_tokens=latents, has_image_condition=False,
                                    mrope_offset=text["vision_start_temporal_offset"], vision_fps=fps,
                                    curr=text["und_len"], device=device)
    return dict(input_ids=text["input_ids"], text_indexes=text["text_indexes"],
                position_ids=torch.cat([text["text_mrope_ids"], vis["vision_mrope_ids"]], dim=1),
                und_len=text["und_len"], sequence_length=text["und_len"] + vis["num_vision_tokens"],
                vision_tokens=[latents], vision_token_shapes=vis["vision_token_shapes"],
                vision_sequence_indexes=vis["vision_sequence_indexes"],
                vision_mse_loss_indexes=vis["vision_mse_loss_indexes"],
                vision_timesteps=torch.full((vis["num_noisy_vision_tokens"],), 500.0, device=device),
                vision_noisy_frame_indexes=vis["vision_noisy_frame_indexes"], return_dict=False)


def mode_dit(args, torch, device):
    from diffusers import Cosmos3OmniTransformer
    clock = Clock(torch, device)
    if args.model:
        m = Cosmos3OmniTransformer.from_pretrained(args.model, subfolder="transformer",
                                                   torch_dtype=torch.bfloat16).to(device).eval()
    else:
        cfg = load_config(args.config)
        if args.layers:
            cfg["num_hidden_layers"] = args.layers
        m = build_random(torch, cfg, device)
    c = m.config
    params = sum(p.numel() for p in m.parameters())
    for shape in args.shapes.split(","):
        h, w, frames = parse_shape(shape)
        lt, lh, lw = (frames - 1) // 4 + 1, h // 16, w // 16
        g = torch.Generator(device=device).manual_seed(0)
        x = torch.randn(1, c.latent_channel, lt, lh, lw, device=device, dtype=torch.bfloat16, generator=g)
        cond = packed_inputs(torch, m, args.prompt_tokens, x, args.fps, device, 1)
        uncond = packed_inputs(torch, m, args.uncond_tokens, x, args.fps, device, 2)
        p = c.latent_patch_size
        tokens = lt * -(-lh // p) * -(-lw // p)
        reset_peak(torch, device)
        out = {}
        with torch.no_grad():
            one = lambda kw, k: out.__setitem__(k, m(**kw)[0][0])
            step_s, step_all = clock.median(lambda: (one(cond, "c"), one(uncond, "u")), args.warmup, args.reps)
            cond_s, _ = clock.median(lambda: one(cond, "c"), 0, args.reps)
            uncond_s, _ = clock.median(lambda: one(uncond, "u"), 0, args.reps)
        y = out["c"].float()
        heads, hd, layers = c.num_attention_heads, c.head_dim, c.num_hidden_layers
        emit(args, bench="cosmos3_dit", impl="diffusers+torch-sdpa", height=h, width=w, frames=frames,
             latent=[c.latent_channel, lt, lh, lw], tokens=tokens, prompt_tokens=args.prompt_tokens,
             uncond_tokens=args.uncond_tokens, layers=layers, hidden_size=c.hidden_size, params=params,
             model=args.model or os.path.relpath(os.path.abspath(args.config), ROOT), dtype="bf16",
             forwards_per_measurement=2, seconds=step_s, seconds_all=step_all, cond_seconds=cond_s,
             uncond_seconds=uncond_s, prefill_seconds=0.0, fps=args.fps,
             attn_flops=4 * tokens * (tokens + args.prompt_tokens) * heads * hd * layers,
             peak_mem_gib=peak_gib(torch, device), output_finite=bool(torch.isfinite(y).all()),
             output_rms=float(y.pow(2).mean().sqrt()), device=device)
        del x, cond, uncond, out, y
    del m
    reset_peak(torch, device)


def step_clock(torch, device, t0, ends):
    def cb(pipe, i, t, kw):
        if device == "cuda":
            torch.cuda.synchronize()
        ends.append(time.perf_counter() - t0)
        return {}
    return cb


def mode_pipeline(args, torch, device):
    if not args.model:
        sys.exit("diffusers_cosmos3_bench.py pipeline: --model DIR is needed")
    t_import = time.perf_counter()
    import diffusers
    from diffusers import Cosmos3OmniPipeline, UniPCMultistepScheduler
    rec = dict(bench="pipeline_e2e", impl="diffusers", pipeline="Cosmos3OmniPipeline",
               model=os.path.abspath(args.model), import_seconds=time.perf_counter() - t_import)
    if device == "cuda":
        torch.cuda.init()
    t0 = time.perf_counter()
    pipe = Cosmos3OmniPipeline.from_pretrained(args.model, torch_dtype=torch.bfloat16)
    t1 = time.perf_counter()
    pipe.to(device)
    Clock(torch, device).sync()
    t2 = time.perf_counter()
    if args.flow_shift:
        pipe.scheduler = UniPCMultistepScheduler.from_config(pipe.scheduler.config, flow_shift=args.flow_shift,
                                                             use_karras_sigmas=False)
    rec.update(load_seconds=t2 - t0, from_pretrained_seconds=t1 - t0, to_device_seconds=t2 - t1,
               load_peak_mem_gib=peak_gib(torch, device), flow_shift=args.flow_shift or None,
               scheduler=type(pipe.scheduler).__name__)
    reset_peak(torch, device)
    gen = torch.Generator(device=device).manual_seed(args.seed)
    ends = []
    t3 = time.perf_counter()
    with torch.no_grad():
        out = pipe(prompt=args.prompt, negative_prompt="", height=args.height, width=args.width,
                   num_frames=args.frames, fps=args.fps, num_inference_steps=args.steps,
                   guidance_scale=args.guidance, generator=gen, output_type="np",
                   callback_on_step_end=step_clock(torch, device, t3, ends))
    Clock(torch, device).sync()
    t4 = time.perf_counter()
    video = out.video
    steps = [b - a for a, b in zip(ends, ends[1:])]
    rec.update(render_seconds=t4 - t3, height=args.height, width=args.width, frames=int(len(video)),
               frame_shape=list(video.shape[1:]), steps=args.steps, guidance_scale=args.guidance, fps=args.fps,
               step_end_seconds=ends, step_seconds=sorted(steps)[len(steps) // 2] if steps else None,
               before_first_step_end_seconds=ends[0] if ends else None,
               after_last_step_seconds=(t4 - t3 - ends[-1]) if ends else None,
               peak_mem_gib=peak_gib(torch, device), diffusers=diffusers.__version__, torch=torch.__version__,
               gpu=torch.cuda.get_device_name() if device == "cuda" else "cpu", process_seconds=t4 - T_START)
    emit(args, **rec)  # the one line (gpu_suite.sh reads the last JSON line of the log)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("mode", choices=["dit", "pipeline"])
    ap.add_argument("--shapes", default="720p", help="dit: 720p (720x1280x189) or HxWxF, comma-separated")
    ap.add_argument("--config", default=DEFAULT_CONFIG, help="dit: a transformer config.json or its directory")
    ap.add_argument("--model", help="dit: a Diffusers checkpoint (its transformer); pipeline: the checkpoint")
    ap.add_argument("--layers", type=int, help="dit: num_hidden_layers instead of the config's")
    ap.add_argument("--prompt-tokens", type=int, default=256, help="dit: the conditional prompt's ids (256)")
    ap.add_argument("--uncond-tokens", type=int, default=64,
                    help="dit: the unconditional prompt's ids (64: the empty negative prompt with its templates)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--prompt", default=PROMPT)
    ap.add_argument("--height", type=int, default=720)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--frames", type=int, default=189)
    ap.add_argument("--fps", type=float, default=24.0)
    ap.add_argument("--steps", type=int, default=35)
    ap.add_argument("--guidance", type=float, default=6.0)
    ap.add_argument("--flow-shift", type=float, default=10.0, help="pipeline: flow sigmas at this shift (0: the "
                    "checkpoint's scheduler as saved)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cpu: a smoke test of the code paths")
    ap.add_argument("--out", help="also append the JSON lines to this file")
    args = ap.parse_args()
    if args.model and args.mode == "dit" and args.layers:
        sys.exit("diffusers_cosmos3_bench.py: --model sets the layers (no --layers)")
    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("diffusers_cosmos3_bench.py: no CUDA device (--device cpu for a smoke test)")
    {"dit": mode_dit, "pipeline": mode_pipeline}[args.mode](args, torch, args.device)
    if args.mode == "pipeline":
        return 0
    import diffusers
    emit(args, done=True, mode=args.mode, torch=torch.__version__, diffusers=diffusers.__version__,
         gpu=torch.cuda.get_device_name() if args.device == "cuda" else "cpu")
    return 0


if __name__ == "__main__":
    sys.exit(main())
