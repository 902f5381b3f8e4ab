#!/usr/bin/env python3
"""Peer baseline of Wan image-to-video on one GPU: diffusers in bf16 with PyTorch SDPA.

Modes (one per call; each prints one JSON line per measurement, also appended to --out):
  dit    WanTransformer3DModel of an image-to-video checkpoint (default the config of
         recipes/models/wan2.1-i2v-14b-720p: in_channels 36, image_dim 1280, added_kv_proj_dim 5120),
         random bf16 weights N(0, 0.02^2) (norm weights 1; the modules from_pretrained keeps in fp32
         kept fp32), or --model DIR's transformer (from_pretrained), forward at --shapes (720p, 480p or
         HxWxF) on random N(0, 1) inputs: latents [1, in_channels, T, H/8, W/8], text [1, 512, text_dim],
         image tokens [1, --image-tokens, image_dim] (257: CLIP ViT-H/14 at 224 px), timestep 500 -- as
         tests/bench/dit_bench.cpp --config measures vgen (text and image embedding in every forward)
  vae22  AutoencoderKLWan of the Wan 2.2 VAE config (recipes/models/wan2.2-ti2v-5b/vae/config.json)
         with random bf16 weights, decode of N(0, 1) latents [1, z_dim, T, H/16, W/16] for --shapes
         (default 704x1280x121), with torch.cuda.max_memory_allocated over the decode (weights and
         output included) -- as tests/bench/vae_bench.cpp --config measures vgen
  ti2v   load + one video: WanImageToVideoPipeline.from_pretrained(--model, bf16).to("cuda") of a
         Wan 2.2 TI2V-5B checkpoint (expand_timesteps: the image's latent frame kept clean), then
         pipe(image, prompt, negative_prompt "", height, width, frames, steps, guidance, output_type
         "np"); the checkpoint's scheduler (UniPC, its flow_shift), nothing written -- as
         `vgen run --recipe recipes/1gpu-ti2v-5b.yaml` renders one JSONL line with an image

Timing: dit and vae22 take the median of --reps CUDA-event timings after --warmup untimed runs; ti2v
the host clock up to torch.cuda.synchronize() (load_seconds, render_seconds, and wall_seconds from the
process start). --device cpu and small --shapes/--layers run every mode on the CPU for a smoke test
(event timing replaced by the host clock; the numbers mean nothing there).

  python3 diffusers_i2v_bench.py dit --shapes 720p,480p
  python3 diffusers_i2v_bench.py vae22 --shapes 704x1280x121
  python3 diffusers_i2v_bench.py ti2v --model DIR --image first.png --height 704 --width 1280 \
      --frames 121 --steps 4 --guidance 5
"""
import argparse
import json
import os
import sys
import time
import types

T_START = time.perf_counter()
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
DEFAULT_DIT = os.path.join(ROOT, "recipes/models/wan2.1-i2v-14b-720p/transformer/config.json")
DEFAULT_VAE22 = os.path.join(ROOT, "recipes/models/wan2.2-ti2v-5b/vae/config.json")
PROMPT = "a red fox running through fresh snow at dawn"


def parse_shape(s):
    named = {"480p": (480, 832, 81), "720p": (720, 1280, 81)}
    if s in named:
        return named[s]
    try:
        h, w, f = (int(x) for x in s.split("x"))
    except ValueError:
        sys.exit("diffusers_i2v_bench.py: bad shape %r (480p, 720p or HxWxF)" % s)
    return h, w, f


def emit(args, **kw):
    line = json.dumps(kw)
    print(line, flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(line + "\n")


class Clock:
    """Median seconds of fn over reps after warm-up: CUDA events on the GPU, the host clock on the CPU."""

    def __init__(self, torch, device):
        self.torch, self.cuda = torch, device == "cuda"

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def median(self, fn, warm, reps):
        for _ in range(warm):
            fn()
        self.sync()
        ts = []
        for _ in range(reps):
            if self.cuda:
                s = self.torch.cuda.Event(enable_timing=True)
                e = self.torch.cuda.Event(enable_timing=True)
                s.record()
                fn()
                e.record()
                self.torch.cuda.synchronize()
                ts.append(s.elapsed_time(e) / 1e3)
            else:
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
        return sorted(ts)[len(ts) // 2], ts


def peak_gib(torch, device):
    return torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else None


def reset_peak(torch, device):
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def init_random(torch, m):
    """N(0, 0.02^2) everywhere but norm weights (1.0), as diffusers_wan_bench.py initialises."""
    with torch.no_grad():
        for n, p in m.named_parameters():
            if "norm" in n and n.endswith("weight") and p.ndim == 1:
                p.fill_(1.0)
            else:
                p.normal_(0, 0.02)


def keep_fp32(torch, m):
    """The modules from_pretrained(torch_dtype=bf16) keeps in fp32 (the class's _keep_in_fp32_modules)."""
    keep = getattr(type(m), "_keep_in_fp32_modules", None) or []
    for name, mod in m.named_modules():
        if any(k in name.split(".") for k in keep):
            mod.to(torch.float32)
    for name, p in m.named_parameters(recurse=True):
        if any(k in name.split(".") for k in keep) and p.dtype != torch.float32:
            p.data = p.data.float()


def build_random(torch, cls, cfg, device, dtype, fp32_modules):
    with torch.device("meta"):
        m = cls(**cfg)
    m = m.to_empty(device=device).to(dtype)
    init_random(torch, m)
    if fp32_modules:
        keep_fp32(torch, m)
    return m.eval()


def load_config(path, drop=("_class_name", "_diffusers_version", "_name_or_path")):
    """A config.json, or the one in the component directory `path`, without diffusers' bookkeeping keys."""
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    with open(path) as f:
        cfg = json.load(f)
    return {k: v for k, v in cfg.items() if k not in drop}


def mode_dit(args, torch, device):
    from diffusers import WanTransformer3DModel
    from diffusers.models.transformers.transformer_wan import WanRotaryPosEmbed
    dt = torch.bfloat16
    clock = Clock(torch, device)
    if args.model:
        m = WanTransformer3DModel.from_pretrained(args.model, subfolder="transformer", torch_dtype=dt).to(device).eval()
        cfg = dict(m.config)
    else:
        cfg = load_config(args.config)
        if args.layers:
            cfg["num_layers"] = args.layers
        m = build_random(torch, WanTransformer3DModel, cfg, device, dt, fp32_modules=True)
        with torch.device(device):  # the RoPE tables are buffers computed in __init__ (meta there)
            m.rope = WanRotaryPosEmbed(cfg["attention_head_dim"], tuple(cfg["patch_size"]), cfg.get("rope_max_seq_len", 1024))
    image_dim = cfg.get("image_dim")
    n_img = cfg.get("pos_embed_seq_len") or args.image_tokens  # FLF2V: both images' tokens
    params = sum(p.numel() for p in m.parameters())
    for shape in args.shapes.split(","):
        h, w, frames = parse_shape(shape)
        pt, ph, pw = cfg["patch_size"]
        lt, lh, lw = (frames - 1) // 4 + 1, h // 8, w // 8
        g = torch.Generator(device=device).manual_seed(0)
        x = torch.randn(1, cfg["in_channels"], lt, lh, lw, device=device, dtype=dt, generator=g)
        ctx = torch.randn(1, args.text_tokens, cfg["text_dim"], device=device, dtype=dt, generator=g)
        img = torch.randn(1, n_img, image_dim, device=device, dtype=dt, generator=g) if image_dim else None
        t = torch.tensor([500.0], device=device)
        tokens = (lt // pt) * (lh // ph) * (lw // pw)
        reset_peak(torch, device)
        out = {}

        def fwd():
            out["y"] = m(hidden_states=x, timestep=t, encoder_hidden_states=ctx, encoder_hidden_states_image=img,
                         return_dict=False)[0]

        with torch.no_grad():
            sec, all_s = clock.median(fwd, args.warmup, args.reps)
        y = out["y"].float()
        heads, hd, layers = cfg["num_attention_heads"], cfg["attention_head_dim"], cfg["num_layers"]
        emit(args, bench="dit_forward", impl="diffusers+torch-sdpa", variant="i2v" if image_dim else "t2v",
             height=h, width=w, frames=frames, tokens=tokens, text_tokens=args.text_tokens,
             image_tokens=n_img if image_dim else 0, in_channels=cfg["in_channels"], layers=layers, params=params,
             model=args.model or os.path.relpath(args.config, ROOT), dtype="bf16", seconds=sec, seconds_all=all_s,
             attn_flops=4 * tokens * tokens * heads * hd * layers, peak_mem_gib=peak_gib(torch, device),
             output_finite=bool(torch.isfinite(y).all()), output_rms=float(y.pow(2).mean().sqrt()), device=device)
        del x, ctx, img, out, y
    del m
    reset_peak(torch, device)


def mode_vae22(args, torch, device):
    from diffusers import AutoencoderKLWan
    dt = torch.bfloat16
    clock = Clock(torch, device)
    cfg = load_config(args.config or DEFAULT_VAE22)
    cfg.pop("clip_output", None)  # a key of the published config the constructor does not take
    m = build_random(torch, AutoencoderKLWan, cfg, device, dt, fp32_modules=False)
    # decode() reads post_quant_conv and the decoder only (the conv counts are cached at init): the
    # encoder's weights go, so the peak compares with vgen's decoder, which holds none.
    m.encoder, m.quant_conv = torch.nn.Identity(), torch.nn.Identity()
    sp, tp = cfg["scale_factor_spatial"], cfg["scale_factor_temporal"]
    for shape in args.shapes.split(","):
        h, w, frames = parse_shape(shape)
        lt, lh, lw = (frames - 1) // tp + 1, h // sp, w // sp
        z = torch.randn(1, cfg["z_dim"], lt, lh, lw, device=device, dtype=dt,
                        generator=torch.Generator(device=device).manual_seed(h))
        out = {}

        def dec():
            out.pop("v", None)  # the previous output freed first, as vgen's bench does
            out["v"] = m.decode(z, return_dict=False)[0]

        with torch.no_grad():
            for _ in range(args.warmup):
                dec()
            out.pop("v", None)
            reset_peak(torch, device)  # the peak of the timed decodes: weights, latents, output
            sec, all_s = clock.median(dec, 0, args.reps)
        v = out["v"]
        emit(args, bench="vae_decode", impl="diffusers+torch", vae="wan2.2", height=h, width=w,
             frames=int(v.shape[2]), latent=[cfg["z_dim"], lt, lh, lw], output=list(v.shape), dtype="bf16",
             seconds=sec, seconds_all=all_s, peak_mem_gib=peak_gib(torch, device),
             peak_bytes=torch.cuda.max_memory_allocated() if device == "cuda" else None,
             weight_bytes=sum(p.numel() * p.element_size() for p in m.parameters()),
             output_finite=bool(torch.isfinite(v).all()), device=device)
        del z, out, v
    del m
    reset_peak(torch, device)


def mode_ti2v(args, torch, device):
    if not args.model or not args.image:
        sys.exit("diffusers_i2v_bench.py ti2v: --model DIR and --image FILE are needed")
    t_import = time.perf_counter()
    import diffusers
    from diffusers import WanImageToVideoPipeline
    import diffusers.pipelines.wan.pipeline_wan_i2v as pipeline_wan_i2v
    from PIL import Image
    # The pipeline cleans prompts with ftfy when installed and fails without it; the prompt here is
    # plain ASCII, so the identity is what ftfy would return.
    if not hasattr(pipeline_wan_i2v, "ftfy"):
        pipeline_wan_i2v.ftfy = types.SimpleNamespace(fix_text=lambda s: s)
    rec = dict(bench="pipeline_e2e", impl="diffusers", pipeline="WanImageToVideoPipeline",
               model=os.path.abspath(args.model), image=os.path.abspath(args.image),
               import_seconds=time.perf_counter() - t_import)
    image = Image.open(args.image).convert("RGB")  # diffusers.utils.load_image without EXIF (none here)
    if device == "cuda":
        torch.cuda.init()
    t0 = time.perf_counter()
    pipe = WanImageToVideoPipeline.from_pretrained(args.model, torch_dtype=torch.bfloat16)
    t1 = time.perf_counter()
    pipe.to(device)
    Clock(torch, device).sync()
    t2 = time.perf_counter()
    if not pipe.config.expand_timesteps:
        print("diffusers_i2v_bench.py: warning: %s has no expand_timesteps (not a TI2V checkpoint)" % args.model,
              file=sys.stderr)
    rec.update(load_seconds=t2 - t0, from_pretrained_seconds=t1 - t0, to_device_seconds=t2 - t1,
               load_peak_mem_gib=peak_gib(torch, device), expand_timesteps=bool(pipe.config.expand_timesteps),
               flow_shift=pipe.scheduler.config.get("flow_shift"), scheduler=type(pipe.scheduler).__name__)
    reset_peak(torch, device)
    gen = torch.Generator(device=device).manual_seed(args.seed)
    t3 = time.perf_counter()
    with torch.no_grad():
        out = pipe(image=image, prompt=args.prompt, negative_prompt="", height=args.height, width=args.width,
                   num_frames=args.frames, num_inference_steps=args.steps, guidance_scale=args.guidance,
                   generator=gen, output_type="np", max_sequence_length=512)
    Clock(torch, device).sync()
    t4 = time.perf_counter()
    frames = out.frames[0]
    rec.update(render_seconds=t4 - t3, height=args.height, width=args.width, frames=int(len(frames)),
               frame_shape=list(frames.shape[1:]), steps=args.steps, guidance_scale=args.guidance,
               peak_mem_gib=peak_gib(torch, device), diffusers=diffusers.__version__, torch=torch.__version__,
               gpu=torch.cuda.get_device_name() if device == "cuda" else "cpu", process_seconds=t4 - T_START)
    emit(args, **rec)  # the one line (gpu_suite.sh reads the last JSON line of the log)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("mode", choices=["dit", "vae22", "ti2v"])
    ap.add_argument("--shapes", help="dit: default 720p,480p; vae22: default 704x1280x121")
    ap.add_argument("--config", help="dit: a transformer config.json or its directory; vae22: the VAE's")
    ap.add_argument("--model", help="dit: a Diffusers checkpoint (its transformer); ti2v: the TI2V checkpoint")
    ap.add_argument("--layers", type=int, help="dit: num_layers instead of the config's")
    ap.add_argument("--image-tokens", type=int, default=257, help="dit: CLIP tokens per image (257)")
    ap.add_argument("--text-tokens", type=int, default=512)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--image", help="ti2v: the first frame (PNG/JPEG)")
    ap.add_argument("--prompt", default=PROMPT)
    ap.add_argument("--height", type=int, default=704)
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--frames", type=int, default=121)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--guidance", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"], help="cpu: a smoke test of the code paths")
    ap.add_argument("--out", help="also append the JSON lines to this file")
    args = ap.parse_args()
    if args.shapes is None:
        args.shapes = "704x1280x121" if args.mode == "vae22" else "720p,480p"
    if args.mode == "dit" and args.config is None:
        args.config = DEFAULT_DIT
    if args.model and args.mode == "dit" and args.layers:
        sys.exit("diffusers_i2v_bench.py: --model sets the layers (no --layers)")
    import torch
    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("diffusers_i2v_bench.py: no CUDA device (--device cpu for a smoke test)")
    {"dit": mode_dit, "vae22": mode_vae22, "ti2v": mode_ti2v}[args.mode](args, torch, args.device)
    if args.mode == "ti2v":
        return 0
    import diffusers
    emit(args, done=True, mode=args.mode, torch=torch.__version__, diffusers=diffusers.__version__,
         gpu=torch.cuda.get_device_name() if args.device == "cuda" else "cpu")
    return 0


if __name__ == "__main__":
    sys.exit(main())
