"""Peer load (and optionally one render) of a Diffusers Wan pipeline directory on one GPU.

Load: WanPipeline.from_pretrained(DIR, torch_dtype=torch.bfloat16) then .to("cuda"), timed on the
host clock up to torch.cuda.synchronize(), as `vgen run --load-only` is timed against it
(scripts/bench/gpu_suite.sh load). With --render it then renders one video with the pipeline's own
call (text encoder, denoising loop with CFG, VAE decode; output_type "np", nothing written), timed
the same way (gpu_suite.sh e2e). Prints one JSON line: load_seconds, bytes_on_disk (the safetensors
files of the components), render_seconds and peak_mem_gib when rendering, the versions and the GPU.

  python3 diffusers_load_bench.py --model DIR
  python3 diffusers_load_bench.py --model DIR --render --height 480 --width 832 --frames 81 \
      --steps 4 --guidance 5
"""
import argparse
import json
import os
import sys
import time
import types


def safetensors_bytes(model_dir):
    total = 0
    for root, _, files in os.walk(model_dir):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files if f.endswith(".safetensors"))
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="Diffusers WanPipeline directory")
    ap.add_argument("--render", action="store_true", help="also render one video after the load")
    ap.add_argument("--prompt", default="a red fox running through fresh snow at dawn")
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--width", type=int, default=832)
    ap.add_argument("--frames", type=int, default=81)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--guidance", type=float, default=5.0)
    ap.add_argument("--seed", type=int, default=42)
    args = ap.parse_args()

    t_import = time.perf_counter()
    import torch
    import diffusers
    from diffusers import WanPipeline
    import diffusers.pipelines.wan.pipeline_wan as pipeline_wan
    # The pipeline cleans prompts with ftfy when it is installed and fails without it; the prompt
    # here is plain ASCII, so the identity is what ftfy would return.
    if not hasattr(pipeline_wan, "ftfy"):
        pipeline_wan.ftfy = types.SimpleNamespace(fix_text=lambda s: s)
    import_seconds = time.perf_counter() - t_import

    rec = dict(bench="pipeline_load", impl="diffusers", model=os.path.abspath(args.model),
               bytes_on_disk=safetensors_bytes(args.model), import_seconds=import_seconds)
    torch.cuda.init()
    t0 = time.perf_counter()
    pipe = WanPipeline.from_pretrained(args.model, torch_dtype=torch.bfloat16)
    t1 = time.perf_counter()
    pipe.to("cuda")
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    rec.update(load_seconds=t2 - t0, from_pretrained_seconds=t1 - t0, to_cuda_seconds=t2 - t1,
               load_peak_mem_gib=torch.cuda.max_memory_allocated() / 2**30)

    if args.render:
        torch.cuda.reset_peak_memory_stats()
        gen = torch.Generator(device="cuda").manual_seed(args.seed)
        t3 = time.perf_counter()
        with torch.no_grad():
            out = pipe(prompt=args.prompt, height=args.height, width=args.width, num_frames=args.frames,
                       num_inference_steps=args.steps, guidance_scale=args.guidance, generator=gen,
                       output_type="np")
        torch.cuda.synchronize()
        t4 = time.perf_counter()
        frames = out.frames[0]
        rec.update(bench="pipeline_e2e", render_seconds=t4 - t3, height=args.height, width=args.width,
                   frames=int(len(frames)), steps=args.steps, guidance_scale=args.guidance,
                   peak_mem_gib=torch.cuda.max_memory_allocated() / 2**30)

    try:  # without accelerate, from_pretrained cannot skip the random init of the weights (slower)
        import accelerate
        accel = accelerate.__version__
    except ImportError:
        accel = None
    rec.update(diffusers=diffusers.__version__, torch=torch.__version__, accelerate=accel,
               gpu=torch.cuda.get_device_name())
    print(json.dumps(rec), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
