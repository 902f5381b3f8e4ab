#!/usr/bin/env python3
"""Accuracy at real shapes: diffusers fp32 against diffusers bf16, vgen bf16 and vgen fp8, one GPU.

From one fixed initial latent tensor and one fixed prompt, renders each (shape, steps) case with
  diffusers_fp32   diffusers' WanPipeline in fp32 with TF32 off (matmul and cuDNN): the reference
  diffusers_bf16   the same pipeline loaded in bf16
  vgen_bf16        `vgen run --recipe R --set precision=bf16` (R: a recipe this script writes)
  vgen_fp8         `vgen run --recipe R --set precision=fp8` (more with --variant)
at guidance 1 (no CFG), the checkpoint's scheduler (UniPC, its flow shift) and max_sequence_length
512, and compares the final latents (rel-L2 ||a - ref|| / ||ref||) and the decoded videos (PSNR over
the frames mapped to [0, 1], as `vgen compare` does) of every render against diffusers_fp32, each
vgen variant against vgen_bf16, and vgen_bf16 against diffusers_bf16. Writes one JSON file (--json:
date, GPU, commit, checkpoint, recipe, shapes, steps, every render's seconds and every number) and
prints a table.

  python3 scripts/bench/fp8_accuracy.py --model CKPT --vgen build-gpu/bin/vgen --json results/fp8_accuracy/1xh200/X.json
  python3 scripts/bench/fp8_accuracy.py ... --shapes 480p,720p --steps 1,4
  python3 scripts/bench/fp8_accuracy.py ... --variant "vgen_fp8_attn=precision=fp8;fp8_config.gemm=false"
  python3 scripts/bench/fp8_accuracy.py --model CKPT --json J --dry-run   # the plan and the recipes
  python3 scripts/bench/fp8_accuracy.py --selftest    # metrics, files, recipe, JSON on made-up arrays
scripts/bench/fp8_accuracy.sh does the device-side setup (vgen build, the trained-like checkpoint of
make_random_checkpoint.py --init trained-like, the diffusers wheel) and calls this.

Text: every render encodes the prompt with its own UMT5 in its own precision (diffusers' transformers
UMT5EncoderModel in fp32 or bf16, vgen's encoder in bf16 under precision bf16 and fp8); no embedding
is shared, so each number includes the text encoder's part of that precision. The tokenization is
recorded (and checked against SentencePiece when the module is there).

Device time (one H200, 14B checkpoint with 2 text layers, 480x832x21, steps 1 and 4): diffusers fp32
load ~40-60 s + 5 forwards ~5 s each + 2 decodes; bf16 ~15 s in all; 4 vgen runs ~10 s each.
Diffusers renders are saved in --work (vgen's layout: <dir>/0000-accuracy.safetensors with `latents`
and `video`) and reused by a later call with --reuse when their parameters match, so a call cut
short by --budget-s can be resumed. Needs numpy; torch, diffusers and transformers for the
diffusers renders; no network.
"""
import argparse
import datetime
import hashlib
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import types

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
STEM = "0000-accuracy"  # vgen names the video of prompt 0 with name "accuracy" so; diffusers' files too
PROMPT = ("A red fox trots through fresh snow at dawn, its breath steaming in the cold air, while tall pine "
          "trees sway in the wind and soft golden light spills across the quiet hills; cinematic, highly "
          "detailed, slow camera pan from left to right.")
SHAPE_ALIASES = {"480p": "480x832x21", "720p": "720x1280x21"}
REFERENCE = "diffusers_fp32"


# ---------------------------------------------------------------- small helpers (no torch)

def parse_shape(s):
    s = SHAPE_ALIASES.get(s, s)
    try:
        h, w, f = (int(x) for x in s.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"shape '{s}': expected HxWxF (e.g. 480x832x21) or 480p / 720p")
    if h <= 0 or w <= 0 or h % 16 or w % 16 or f < 1 or (f - 1) % 4:
        raise argparse.ArgumentTypeError(f"shape '{s}': height and width multiples of 16, frames 4k+1")
    return (h, w, f)


def shape_name(shape):
    return "x".join(str(x) for x in shape)


def latent_shape(shape, channels=16, st=4, ss=8):
    h, w, f = shape
    return [1, channels, (f - 1) // st + 1, h // ss, w // ss]


def parse_variant(text):
    """NAME=KEY=VALUE[;KEY=VALUE...] -> (NAME, [KEY=VALUE, ...])."""
    name, sep, rest = text.partition("=")
    sets = [x.strip() for x in rest.split(";") if x.strip()]
    if not sep or not name or not sets or any("=" not in x for x in sets):
        raise argparse.ArgumentTypeError(f"--variant '{text}': expected NAME=KEY=VALUE[;KEY=VALUE...]")
    return name, sets


def yaml_scalar(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v))  # a JSON string is a YAML double-quoted scalar


def to_yaml(d, indent=0):
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            out.append(" " * indent + f"{k}:")
            out.append(to_yaml(v, indent + 2))
        else:
            out.append(" " * indent + f"{k}: {yaml_scalar(v)}")
    return "\n".join(out)


def vgen_recipe(model, device, shape, steps, a, latents_path, prompts_path, out_dir):
    h, w, f = shape
    return {
        "model": os.path.abspath(model),
        "device": device,
        "precision": "bf16",  # each run sets its own with --set precision=...
        "prompts": os.path.abspath(prompts_path),
        "generation": {"height": h, "width": w, "num_frames": f, "num_inference_steps": steps,
                       "guidance_scale": 1.0, "scheduler": a.scheduler, "flow_shift": a.flow_shift,
                       "negative_prompt": "", "max_sequence_length": a.max_sequence_length,
                       "seed": a.seed, "initial_latents": os.path.abspath(latents_path)},
        "output": {"dir": os.path.abspath(out_dir), "save_tensors": True, "skip_existing": False},
    }


def json_num(x):
    """A float for JSON: None for NaN and +-inf (strict JSON has neither)."""
    return x if isinstance(x, (int, float)) and math.isfinite(x) else None


def git_commit():
    try:
        c = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if c.returncode != 0:
            return None, None
        d = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, timeout=10)
        return c.stdout.strip(), bool(d.stdout.strip()) if d.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None, None


def gpu_name_smi():
    try:
        c = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                           text=True, timeout=20)
        return c.stdout.strip().splitlines()[0] if c.returncode == 0 and c.stdout.strip() else None
    except (OSError, subprocess.SubprocessError, IndexError):
        return None


def read_json(path, default=None):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return default


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for blk in iter(lambda: fh.read(1 << 20), b""):
            h.update(blk)
    return h.hexdigest()


# ---------------------------------------------------------------- safetensors with numpy only

def st_write(path, tensors):
    """Writes {name: array} as F32 safetensors (atomically)."""
    import numpy as np
    header, off, arrays = {}, 0, []
    for name, a in tensors.items():
        a = np.ascontiguousarray(a, dtype="<f4")
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
        arrays.append(a)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(struct.pack("<Q", len(h)) + h)
        for a in arrays:
            fh.write(memoryview(a).cast("B"))
    os.replace(tmp, path)


def st_read(path, names=None):
    """{name: float32 array} of a safetensors file (F32, F16, BF16, F64)."""
    import numpy as np
    with open(path, "rb") as fh:
        n = struct.unpack("<Q", fh.read(8))[0]
        header = json.loads(fh.read(n))
        base = 8 + n
        out = {}
        for name, meta in header.items():
            if name == "__metadata__" or (names is not None and name not in names):
                continue
            a, b = meta["data_offsets"]
            fh.seek(base + a)
            raw = fh.read(b - a)
            dt = meta["dtype"]
            if dt == "BF16":
                x = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
            elif dt in ("F32", "F16", "F64"):
                x = np.frombuffer(raw, dtype={"F32": "<f4", "F16": "<f2", "F64": "<f8"}[dt]).astype(np.float32)
            else:
                raise ValueError(f"{path}: tensor {name} has dtype {dt}")
            out[name] = x.reshape(meta["shape"])
    missing = [k for k in (names or []) if k not in out]
    if missing:
        raise KeyError(f"{path}: no tensor {', '.join(missing)}")
    return out


# ---------------------------------------------------------------- metrics (numpy, float64)

def rel_l2(a, ref):
    """||a - ref|| / ||ref|| (||a - ref|| when ref is 0); NaN when either is not finite."""
    import numpy as np
    a64, r64 = np.asarray(a, np.float64).ravel(), np.asarray(ref, np.float64).ravel()
    if a64.shape != r64.shape:
        raise ValueError(f"shapes differ: {np.shape(a)} against {np.shape(ref)}")
    d = a64 - r64
    num, den = float(d @ d), float(r64 @ r64)
    if not (math.isfinite(num) and math.isfinite(den)):
        return float("nan")
    return math.sqrt(num / den) if den > 0 else math.sqrt(num)


def video_error(a, ref):
    """(PSNR dB, max |diff|) of two videos in [-1, 1] after (v * 0.5 + 0.5) clamped to [0, 1], as
    `vgen compare` computes them; +inf PSNR when identical, NaN when not finite. Frame by frame."""
    import numpy as np
    if np.shape(a) != np.shape(ref):
        raise ValueError(f"shapes differ: {np.shape(a)} against {np.shape(ref)}")
    a2 = np.asarray(a).reshape(-1, np.shape(a)[-2] * np.shape(a)[-1]) if np.ndim(a) >= 2 else np.asarray(a)[None]
    r2 = np.asarray(ref).reshape(a2.shape)
    sq, mx, n = 0.0, 0.0, 0
    for i in range(a2.shape[0]):
        x = np.clip(a2[i].astype(np.float64) * 0.5 + 0.5, 0.0, 1.0)
        y = np.clip(r2[i].astype(np.float64) * 0.5 + 0.5, 0.0, 1.0)
        d = x - y
        sq += float(d @ d)
        mx = max(mx, float(np.abs(d).max()) if d.size else 0.0)
        n += d.size
    if not (math.isfinite(sq) and np.isfinite(a2).all() and np.isfinite(r2).all()):
        return float("nan"), float("nan")
    mse = sq / n if n else 0.0
    return (10.0 * math.log10(1.0 / mse) if mse > 0 else float("inf")), mx


def rms(a):
    import numpy as np
    x = np.asarray(a, np.float64).ravel()
    return math.sqrt(float(x @ x) / x.size) if x.size else 0.0


def compare(a_file, ref_file):
    import numpy as np
    a, r = st_read(a_file, ["latents", "video"]), st_read(ref_file, ["latents", "video"])
    psnr, mx = video_error(a["video"], r["video"])
    rl = rel_l2(a["latents"], r["latents"])
    return {"latents_rel_l2": json_num(rl), "video_psnr_db": json_num(psnr), "video_max_abs": json_num(mx),
            "identical": bool(psnr == float("inf") and rl == 0.0),
            "finite": bool(np.isfinite(a["latents"]).all() and np.isfinite(a["video"]).all())}


# ---------------------------------------------------------------- the plan

class Case:
    def __init__(self, shape, steps, work):
        self.shape, self.steps = shape, steps
        self.key = f"{shape_name(shape)}_s{steps}"
        self.dir = os.path.join(work, self.key)

    def render_dir(self, name):
        return os.path.join(self.dir, name)

    def render_file(self, name):
        return os.path.join(self.dir, name, STEM + ".safetensors")


def latents_file(work, shape, seed):
    return os.path.join(work, f"initial_latents_{shape_name(shape)}_seed{seed}.safetensors")


def make_inputs(a):
    """The initial latents per shape and the prompt file (deterministic from --seed)."""
    import numpy as np
    os.makedirs(a.work, exist_ok=True)
    files = {}
    for shape in a.shapes:
        path = latents_file(a.work, shape, a.seed)
        if not os.path.exists(path):
            x = np.random.default_rng(a.seed).standard_normal(latent_shape(shape), dtype=np.float32)
            st_write(path, {"initial_latents": x})
        files[shape] = path
    prompts = os.path.join(a.work, "prompt.jsonl")
    with open(prompts, "w") as fh:
        fh.write(json.dumps({"prompt": a.prompt, "name": "accuracy"}) + "\n")
    return files, prompts


def render_params(a, case, name):
    """What a saved render depends on (a --reuse'd file must match it)."""
    return {"render": name, "model": os.path.abspath(a.model), "checkpoint": a.checkpoint_info,
            "prompt": a.prompt, "seed": a.seed, "shape": list(case.shape), "steps": case.steps,
            "scheduler": a.scheduler, "flow_shift": a.flow_shift, "max_sequence_length": a.max_sequence_length,
            "guidance_scale": 1.0}


# ---------------------------------------------------------------- diffusers renders

def tf32_off(torch):
    """TF32 off for the whole process, with the legacy flags only (torch >= 2.9 raises on some mixes of
    the legacy and the fp32_precision API); returns the flags as read back."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")
    state = {}
    for key, get in (("torch.backends.cuda.matmul.allow_tf32", lambda: torch.backends.cuda.matmul.allow_tf32),
                     ("torch.backends.cudnn.allow_tf32", lambda: torch.backends.cudnn.allow_tf32),
                     ("float32_matmul_precision", torch.get_float32_matmul_precision),
                     ("torch.backends.cuda.matmul.fp32_precision",
                      lambda: torch.backends.cuda.matmul.fp32_precision),
                     ("torch.backends.cudnn.conv.fp32_precision", lambda: torch.backends.cudnn.conv.fp32_precision),
                     ("torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction (left as it is)",
                      lambda: torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction)):
        try:
            state[key] = get()
        except Exception as e:  # an older torch without the fp32_precision API
            state[key] = f"unavailable: {type(e).__name__}"
    if state["torch.backends.cuda.matmul.allow_tf32"] is not False or state["torch.backends.cudnn.allow_tf32"] is not False:
        raise RuntimeError(f"TF32 is still on: {state}")
    return state


def make_scheduler(pipe, a):
    from diffusers import FlowMatchEulerDiscreteScheduler, UniPCMultistepScheduler
    if a.scheduler == "euler":
        return FlowMatchEulerDiscreteScheduler(shift=a.flow_shift)
    return UniPCMultistepScheduler.from_config(pipe.scheduler.config, flow_shift=a.flow_shift)


def decode(pipe, latents):
    """The pipeline's own decode (WanPipeline.__call__ after the loop): denormalize, VAE, [-1, 1]."""
    import torch
    vae = pipe.vae
    z = latents.to(vae.dtype)
    mean = torch.tensor(vae.config.latents_mean).view(1, vae.config.z_dim, 1, 1, 1).to(z.device, z.dtype)
    inv_std = 1.0 / torch.tensor(vae.config.latents_std).view(1, vae.config.z_dim, 1, 1, 1).to(z.device, z.dtype)
    return vae.decode(z / inv_std + mean, return_dict=False)[0]


def tokenization(pipe, a):
    info = {}
    try:
        import diffusers.pipelines.wan.pipeline_wan as pw
        cleaned = pw.prompt_clean(a.prompt)
        enc = pipe.tokenizer([cleaned], padding="max_length", max_length=a.max_sequence_length, truncation=True,
                             add_special_tokens=True, return_attention_mask=True)
        n = int(sum(enc["attention_mask"][0]))
        ids = list(enc["input_ids"][0][:n])
        info = {"tokens": n, "ids": [int(i) for i in ids], "tokenizer": type(pipe.tokenizer).__name__}
        spm_path = os.path.join(a.model, "tokenizer", "spiece.model")
        try:
            import sentencepiece as spm
            sp = spm.SentencePieceProcessor(model_file=spm_path)
            info["sentencepiece_agrees"] = sp.encode(cleaned) + [1] == info["ids"]
        except ImportError:
            info["sentencepiece_agrees"] = None  # module not installed: not checked
    except Exception as e:  # the record only; the renders do not depend on it
        info["error"] = repr(e)[:300]
    return info


def diffusers_renders(a, cases, latents, rec, deadline):
    import gc
    import torch
    import diffusers
    import transformers
    from diffusers import WanPipeline
    import diffusers.pipelines.wan.pipeline_wan as pw
    if not getattr(pw, "ftfy", None):  # prompt_clean needs ftfy when it is not installed: identity
        pw.ftfy = types.SimpleNamespace(fix_text=lambda s: s)  # (the prompt is plain ASCII)
    rec["tf32"] = tf32_off(torch)
    rec["versions"].update(torch=torch.__version__, diffusers=diffusers.__version__,
                           transformers=transformers.__version__)
    rec["gpu"] = torch.cuda.get_device_name()
    rec["attention_note"] = ("diffusers: PyTorch SDPA's own choice per dtype (fp32 has no flash or cuDNN "
                             "kernel: the memory-efficient one; bf16: cuDNN or flash)")
    for prec in a.diffusers:
        name = f"diffusers_{prec}"
        todo = []
        for c in cases:
            side = c.render_file(name) + ".json"
            if a.reuse and os.path.exists(c.render_file(name)) and read_json(side, {}).get("params") == \
                    render_params(a, c, name):
                r = read_json(side)["render"]
                r["reused"] = True
                rec["renders"].append(r)
                print(f"[accuracy] {name} {c.key}: reused {c.render_file(name)}", flush=True)
            else:
                todo.append(c)
        if not todo:
            continue
        if time.time() > deadline:
            for c in todo:
                rec["renders"].append({"name": name, "case": c.key, "status": "skipped", "error": "budget"})
            continue
        dtype = {"fp32": torch.float32, "bf16": torch.bfloat16}[prec]
        torch.cuda.reset_peak_memory_stats()
        t0 = time.perf_counter()
        try:
            pipe = WanPipeline.from_pretrained(a.model, torch_dtype=dtype)
            pipe.to("cuda")
            torch.cuda.synchronize()
        except Exception as e:
            for c in todo:
                rec["renders"].append({"name": name, "impl": "diffusers", "precision": prec, "case": c.key,
                                       "status": "failed", "error": "load: " + repr(e)[-800:]})
            print(f"[accuracy] {name}: load failed: {e!r}"[:400], flush=True)
            pipe = None
            gc.collect()
            torch.cuda.empty_cache()
            continue
        load_s = time.perf_counter() - t0
        pipe.set_progress_bar_config(disable=True)
        pipe.scheduler = make_scheduler(pipe, a)
        rec.setdefault("tokenization", {})[name] = tokenization(pipe, a)
        print(f"[accuracy] {name}: loaded in {load_s:.1f} s, {torch.cuda.memory_allocated() / 2**30:.1f} GiB",
              flush=True)
        for c in todo:
            r = {"name": name, "impl": "diffusers", "precision": prec, "case": c.key, "shape": list(c.shape),
                 "steps": c.steps, "load_seconds": load_s}
            if time.time() > deadline:
                r.update(status="skipped", error="budget")
                rec["renders"].append(r)
                continue
            try:
                lat0 = torch.from_numpy(st_read(latents[c.shape], ["initial_latents"])["initial_latents"]).to("cuda")
                h, w, f = c.shape
                torch.cuda.synchronize()
                t1 = time.perf_counter()
                with torch.no_grad():
                    out = pipe(prompt=a.prompt, height=h, width=w, num_frames=f, num_inference_steps=c.steps,
                               guidance_scale=1.0, latents=lat0.clone(), output_type="latent",
                               max_sequence_length=a.max_sequence_length, return_dict=False)[0]
                    torch.cuda.synchronize()
                    t2 = time.perf_counter()
                    video = decode(pipe, out)
                    torch.cuda.synchronize()
                t3 = time.perf_counter()
                os.makedirs(c.render_dir(name), exist_ok=True)
                st_write(c.render_file(name), {"latents": out.float().cpu().numpy(),
                                               "video": video.float().cpu().numpy()})
                r.update(status="ok", render_seconds=t2 - t1, decode_seconds=t3 - t2,
                         timesteps=[float(t) for t in pipe.scheduler.timesteps],
                         peak_mem_gib=torch.cuda.max_memory_allocated() / 2**30, file=c.render_file(name))
                with open(c.render_file(name) + ".json", "w") as fh:
                    json.dump({"params": render_params(a, c, name), "render": r}, fh, indent=1)
                del out, video, lat0
            except Exception as e:
                r.update(status="failed", error=repr(e)[-800:])
            rec["renders"].append(r)
            print(f"[accuracy] {name} {c.key}: {r['status']} {r.get('render_seconds', 0):.1f} s "
                  f"{r.get('error', '')}", flush=True)
        del pipe
        gc.collect()
        torch.cuda.empty_cache()
        print(f"[accuracy] {name}: freed, {torch.cuda.memory_allocated() / 2**30:.2f} GiB still allocated", flush=True)


# ---------------------------------------------------------------- vgen renders

def vgen_env(a):
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("NCCL_NVLS_ENABLE", "0")
    blas = os.path.join(REPO, ".dev", "deps", "openblas", "lib")
    if os.path.isdir(blas):
        env["LD_LIBRARY_PATH"] = blas + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def vgen_command(a, recipe_path, out_dir, sets):
    cmd = [a.vgen, "run", "--recipe", recipe_path, "--out", out_dir]
    for s in list(a.vgen_set) + list(sets):
        cmd += ["--set", s]
    return cmd


def vgen_renders(a, cases, latents, prompts, rec, deadline, dry=False):
    env = vgen_env(a)
    for c in cases:
        recipe = vgen_recipe(a.model, a.vgen_device, c.shape, c.steps, a, latents[c.shape], prompts,
                             c.render_dir("vgen"))
        os.makedirs(c.dir, exist_ok=True)
        recipe_path = os.path.join(c.dir, "recipe.yaml")
        with open(recipe_path, "w") as fh:
            fh.write(f"# scripts/bench/fp8_accuracy.py: {c.key} (output.dir is replaced by --out per render)\n")
            fh.write(to_yaml(recipe) + "\n")
        rec["recipes"][c.key] = recipe
        for name, sets in a.variants:
            out_dir = c.render_dir(name)
            cmd = vgen_command(a, recipe_path, out_dir, sets)
            r = {"name": name, "impl": "vgen", "precision": next((s.split("=", 1)[1] for s in reversed(sets)
                                                                  if s.startswith("precision=")), None),
                 "sets": sets, "case": c.key, "shape": list(c.shape), "steps": c.steps,
                 "command": " ".join(cmd)}
            if dry:
                print("+ " + " ".join(cmd))
                continue
            if time.time() > deadline:
                r.update(status="skipped", error="budget")
                rec["renders"].append(r)
                continue
            shutil.rmtree(out_dir, ignore_errors=True)
            os.makedirs(out_dir)
            log = os.path.join(c.dir, f"{name}.log")
            t0 = time.perf_counter()
            try:
                with open(log, "w") as fh:
                    p = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, timeout=a.vgen_timeout)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                rc = 124
            except OSError as e:
                rc = 127
                with open(log, "a") as fh:
                    fh.write(f"cannot run {a.vgen}: {e}\n")
            r.update(rc=rc, wall_seconds=time.perf_counter() - t0, log=log)
            timing = read_json(os.path.join(out_dir, "timing.json"), {})
            vids = timing.get("videos") or [{}]
            r.update(load_seconds=timing.get("load_seconds"), seconds=vids[0].get("seconds"))
            found = sorted(fn for fn in os.listdir(out_dir) if fn.endswith(".safetensors"))
            if rc == 0 and found:
                if found[0] != STEM + ".safetensors":  # `vgen compare` pairs files by stem: one name for all
                    os.replace(os.path.join(out_dir, found[0]), c.render_file(name))
                r.update(status="ok", file=c.render_file(name))
            else:
                with open(log, errors="replace") as fh:
                    tail = fh.read()[-1200:]
                r.update(status="failed", error=(vids[0].get("error") or tail))
            rec["renders"].append(r)
            print(f"[accuracy] {name} {c.key}: {r['status']} rc {rc} in {r['wall_seconds']:.1f} s", flush=True)


def vgen_compare(a, ref_dir, dir_b):
    """`vgen compare REF B --json` as a cross-check of the numbers computed here (None on failure)."""
    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        p = subprocess.run([a.vgen, "compare", ref_dir, dir_b, "--json", tmp], capture_output=True, text=True,
                           env=vgen_env(a), timeout=300)
        j = read_json(tmp, {})
        v = [x for x in j.get("videos", []) if x.get("name") == STEM]
        if p.returncode not in (0, 10) or not v:
            return None
        return {k: v[0].get(k) for k in ("latents_rel_l2", "video_psnr_db", "video_max_abs", "status")}
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        os.remove(tmp)


# ---------------------------------------------------------------- comparisons, table, JSON

def pairs_for(names, reference):
    """(render, reference) pairs: all against the reference, vgen variants against vgen_bf16, and
    vgen_bf16 against diffusers_bf16."""
    out = [(n, reference) for n in names if n != reference]
    if "vgen_bf16" in names:
        out += [(n, "vgen_bf16") for n in names if n.startswith("vgen_") and n not in ("vgen_bf16", reference)
                and (n, "vgen_bf16") not in out]
        if "diffusers_bf16" in names and "diffusers_bf16" != reference:
            out.append(("vgen_bf16", "diffusers_bf16"))
    return [p for p in out if p[0] in names and p[1] in names]


def comparisons(a, cases, rec):
    ok = {(r["case"], r["name"]) for r in rec["renders"] if r.get("status") == "ok"}
    names = [n for n in dict.fromkeys(r["name"] for r in rec["renders"])]
    out = []
    for c in cases:
        have = [n for n in names if (c.key, n) in ok]
        ctx = {}
        if a.reference in have:
            ref = st_read(c.render_file(a.reference), ["latents"])["latents"]
            lat0 = st_read(latents_file(a.work, c.shape, a.seed), ["initial_latents"])["initial_latents"]
            ctx = {"initial_latents_rms": rms(lat0), "reference_latents_rms": rms(ref),
                   "reference_step_change_rms": rms(ref.astype("float64") - lat0)}
        for n, refn in pairs_for(have, a.reference):
            e = {"case": c.key, "shape": list(c.shape), "steps": c.steps, "render": n, "reference": refn}
            try:
                e.update(compare(c.render_file(n), c.render_file(refn)))
            except Exception as ex:
                e.update(error=repr(ex)[:300])
            if refn == a.reference:
                e.update(ctx)
            if a.vgen_compare and os.path.exists(a.vgen):
                e["vgen_compare"] = vgen_compare(a, c.render_dir(refn), c.render_dir(n))
            out.append(e)
    return out


def target_check(rec, reference):
    vals = {e["case"]: e.get("latents_rel_l2") for e in rec["comparisons"]
            if e["render"] == "diffusers_bf16" and e["reference"] == reference and e["steps"] == 1}
    met = None if not vals or any(v is None for v in vals.values()) else all(v <= 0.02 for v in vals.values())
    return {"what": "diffusers_bf16 against diffusers_fp32 (TF32 off): latents rel-L2 <= 0.02 after 1 step",
            "values": vals, "met": met}


def fmt(x, f):
    return "-" if x is None else format(x, f)


def table(rec):
    lines = [f"{'case':<18} {'render':<22} {'against':<16} {'latents rel-L2':>14} {'video PSNR':>11} "
             f"{'max|d|':>9}  {'seconds':>8}"]
    secs = {(r["case"], r["name"]): r.get("render_seconds") or r.get("wall_seconds") for r in rec["renders"]}
    for e in rec["comparisons"]:
        lines.append(f"{e['case']:<18} {e['render']:<22} {e['reference']:<16} "
                     f"{fmt(e.get('latents_rel_l2'), '.3e'):>14} {fmt(e.get('video_psnr_db'), '.2f'):>8} dB "
                     f"{fmt(e.get('video_max_abs'), '.2e'):>9}  {fmt(secs.get((e['case'], e['render'])), '.1f'):>8}"
                     + (f"  ({e['error']})" if e.get("error") else ""))
    bad = [r for r in rec["renders"] if r.get("status") != "ok"]
    for r in bad:
        err = str(r.get("error", "")).strip().splitlines()
        lines.append(f"{r['case']:<18} {r['name']:<22} {r.get('status')}: {err[-1] if err else ''}"[:200])
    t = rec.get("target", {})
    lines.append(f"target ({t.get('what')}): {t.get('values')} -> {t.get('met')}")
    return "\n".join(lines)


def write_json(path, rec):
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(rec, fh, indent=1, allow_nan=False)
        fh.write("\n")
    os.replace(tmp, path)


def checkpoint_info(model):
    tr = read_json(os.path.join(model, "transformer", "config.json"), {})
    te = read_json(os.path.join(model, "text_encoder", "config.json"), {})
    return {"random_init": read_json(os.path.join(model, "random_init.json")),
            "transformer_layers": tr.get("num_layers"), "dim": (tr.get("num_attention_heads") or 0) *
            (tr.get("attention_head_dim") or 0) or None, "text_encoder_layers": te.get("num_layers"),
            "text_d_model": te.get("d_model")}


def base_record(a):
    commit, dirty = git_commit()
    return {"bench": "accuracy_real_shapes",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "gpu": None, "commit": a.commit or os.environ.get("VGEN_COMMIT") or commit or "unknown",
            "commit_dirty": dirty if not a.commit else None,
            "model": os.path.abspath(a.model), "checkpoint": a.checkpoint_info, "prompt": a.prompt,
            "guidance_scale": 1.0, "negative_prompt": None, "scheduler": a.scheduler, "flow_shift": a.flow_shift,
            "max_sequence_length": a.max_sequence_length, "seed": a.seed,
            "shapes": [shape_name(s) for s in a.shapes], "steps": a.steps, "reference": a.reference,
            "vgen": os.path.abspath(a.vgen), "vgen_device": a.vgen_device, "vgen_set": list(a.vgen_set),
            "variants": {n: s for n, s in a.variants},
            "text_embedding": ("each render encodes the prompt with its own UMT5 in its own precision "
                               "(diffusers: transformers' UMT5EncoderModel in fp32 or bf16; vgen: its own "
                               "encoder, bf16 under precision bf16 and fp8); no embedding is shared"),
            "metrics": ("latents_rel_l2 = ||a - ref|| / ||ref|| of the final latents (before the VAE's "
                        "denormalization); video PSNR and max |diff| over the decoded frames mapped to [0, 1] "
                        "((v + 1) / 2 clamped), as vgen compare computes them; reference_step_change_rms is "
                        "the RMS of the reference's final latents minus the initial ones"),
            "initial_latents": {}, "versions": {"python": sys.version.split()[0]}, "recipes": {},
            "renders": [], "comparisons": []}


# ---------------------------------------------------------------- main

def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="Diffusers Wan pipeline directory (make_random_checkpoint.py --init trained-like)")
    ap.add_argument("--vgen", default=os.path.join(REPO, "build-gpu", "bin", "vgen"), help="vgen binary")
    ap.add_argument("--json", help="the results file to write (e.g. results/fp8_accuracy/1xh200/<date>_1xh200_accuracy.json)")
    ap.add_argument("--shapes", default="480p", help="HxWxF list (480p = 480x832x21, 720p = 720x1280x21)")
    ap.add_argument("--steps", default="1,4", help="step counts (default 1,4)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the initial latents (numpy PCG64, N(0, 1))")
    ap.add_argument("--prompt", default=PROMPT)
    ap.add_argument("--scheduler", choices=("unipc", "euler"), default="unipc")
    ap.add_argument("--flow-shift", type=float, default=None, help="default: the checkpoint's scheduler config")
    ap.add_argument("--max-sequence-length", type=int, default=512)
    ap.add_argument("--diffusers", default="fp32,bf16", help="diffusers precisions to render ('' for none)")
    ap.add_argument("--vgen-precisions", default="bf16,fp8", help="vgen renders vgen_<p> with --set precision=<p>")
    ap.add_argument("--variant", action="append", type=parse_variant, default=[],
                    help="another vgen render: NAME=KEY=VALUE[;KEY=VALUE...] (recipe overrides)")
    ap.add_argument("--vgen-set", action="append", default=[], help="KEY=VALUE for every vgen render")
    ap.add_argument("--vgen-device", default="cuda", help="the recipes' device (cpu: a local check at small shapes)")
    ap.add_argument("--vgen-timeout", type=int, default=400, help="seconds per vgen run")
    ap.add_argument("--no-vgen-compare", dest="vgen_compare", action="store_false",
                    help="skip the cross-check of each pair with `vgen compare`")
    ap.add_argument("--reference", default=REFERENCE, help="render the others are compared with")
    ap.add_argument("--work", default=None,
                    help="scratch dir for latents, renders, recipes and logs (default /tmp/vgen_accuracy; "
                         "renders are 100-230 MB each, so not under $OUT)")
    ap.add_argument("--reuse", action="store_true", help="reuse diffusers renders in --work whose parameters match")
    ap.add_argument("--budget-s", type=float, default=0, help="skip renders once this many seconds have passed "
                    "(0: no limit); the JSON says which")
    ap.add_argument("--commit", default=None, help="commit to record (default: $VGEN_COMMIT, else git rev-parse HEAD: a copied tree may carry stale git metadata)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan, the recipe and the vgen commands")
    ap.add_argument("--selftest", action="store_true", help="check the non-GPU parts on made-up arrays")
    a = ap.parse_args(argv)
    if a.selftest:
        return a
    if not a.model or not a.json:
        ap.error("--model and --json are required")
    a.shapes = [parse_shape(s.strip()) for s in a.shapes.split(",") if s.strip()]
    try:
        a.steps = [int(s) for s in a.steps.split(",") if s.strip()]
    except ValueError:
        ap.error("--steps: a list of integers")
    if not a.shapes or not a.steps or any(s < 1 for s in a.steps):
        ap.error("--shapes and --steps need at least one value each, steps >= 1")
    a.diffusers = [p.strip() for p in a.diffusers.split(",") if p.strip()]
    if any(p not in ("fp32", "bf16") for p in a.diffusers):
        ap.error("--diffusers: fp32 and/or bf16")
    a.variants = [(f"vgen_{p.strip()}", [f"precision={p.strip()}"]) for p in a.vgen_precisions.split(",") if p.strip()]
    a.variants += a.variant
    if len({n for n, _ in a.variants}) != len(a.variants):
        ap.error("two vgen renders have the same name")
    sched = read_json(os.path.join(a.model, "scheduler", "scheduler_config.json"), {})
    if a.flow_shift is None:
        a.flow_shift = sched.get("flow_shift") if a.scheduler == "unipc" else sched.get("shift", sched.get("flow_shift"))
        if a.flow_shift is None:
            ap.error(f"no flow_shift in {a.model}/scheduler/scheduler_config.json: pass --flow-shift")
    a.flow_shift = float(a.flow_shift)
    if a.work is None:
        a.work = os.path.join(tempfile.gettempdir(), "vgen_accuracy")
    a.work = os.path.abspath(a.work)
    a.checkpoint_info = checkpoint_info(a.model)
    return a


def run(a):
    t_start = time.time()
    deadline = t_start + a.budget_s if a.budget_s > 0 else float("inf")
    cases = [Case(s, n, a.work) for s in a.shapes for n in a.steps]
    rec = base_record(a)
    if a.dry_run:
        print(f"[accuracy] plan: {len(cases)} case(s) {[c.key for c in cases]}; diffusers {a.diffusers}; "
              f"vgen {[n for n, _ in a.variants]}; work {a.work}; json {a.json}")
        for c in cases:
            print(f"# {c.key} recipe:\n" + to_yaml(vgen_recipe(a.model, a.vgen_device, c.shape, c.steps, a,
                                                                 latents_file(a.work, c.shape, a.seed),
                                                                 os.path.join(a.work, "prompt.jsonl"),
                                                                 c.render_dir("vgen"))))
            for name, sets in a.variants:
                print("+ " + " ".join(vgen_command(a, os.path.join(c.dir, "recipe.yaml"), c.render_dir(name), sets)))
        return 0
    latents, prompts = make_inputs(a)
    for s, p in latents.items():
        rec["initial_latents"][shape_name(s)] = {"file": p, "shape": latent_shape(s), "sha256": sha256(p),
                                                 "generator": f"numpy PCG64 seed {a.seed}, standard normal, float32"}
    import numpy
    rec["versions"]["numpy"] = numpy.__version__
    if a.diffusers:
        try:
            diffusers_renders(a, cases, latents, rec, deadline)
        except Exception as e:  # e.g. no diffusers on PYTHONPATH: the vgen renders still run
            rec["diffusers_error"] = repr(e)[-800:]
            print(f"[accuracy] diffusers renders stopped: {e!r}"[:400], flush=True)
        write_json(a.json, dict(rec, complete=False, partial="after the diffusers renders"))
    if a.variants:
        vgen_renders(a, cases, latents, prompts, rec, deadline)
    if rec["gpu"] is None and a.vgen_device == "cuda":
        rec["gpu"] = gpu_name_smi()
    rec["comparisons"] = comparisons(a, cases, rec)
    rec["target"] = target_check(rec, a.reference)
    rec["complete"] = "diffusers_error" not in rec and all(r.get("status") == "ok" for r in rec["renders"])
    rec["wall_seconds"] = time.time() - t_start
    write_json(a.json, rec)
    print(table(rec))
    print(f"[accuracy] wrote {a.json} ({len(rec['renders'])} renders, {len(rec['comparisons'])} comparisons) "
          f"in {rec['wall_seconds']:.0f} s")
    return 0 if rec["complete"] else 1


# ---------------------------------------------------------------- selftest (numpy, no GPU)

def selftest():
    import numpy as np
    ok = True

    def check(what, cond):
        nonlocal ok
        ok &= bool(cond)
        print(f"selftest {what}: {'OK' if cond else 'FAIL'}")

    rng = np.random.default_rng(1)
    ref = rng.standard_normal((1, 16, 2, 4, 6)).astype(np.float32)
    check("rel_l2 of a 1% perturbation", abs(rel_l2(ref * 1.01, ref) - 0.01) < 1e-6)
    check("rel_l2 identical", rel_l2(ref, ref) == 0.0)
    check("rel_l2 NaN", math.isnan(rel_l2(np.full_like(ref, np.nan), ref)))
    v = np.clip(rng.standard_normal((1, 3, 5, 8, 8)), -1, 1).astype(np.float32)
    d = v.copy()
    d[0, 0, 0, 0, 0] = v[0, 0, 0, 0, 0] + 0.2 if v[0, 0, 0, 0, 0] < 0.5 else v[0, 0, 0, 0, 0] - 0.2
    psnr, mx = video_error(d, v)
    want = 10 * math.log10(v.size / 0.1 ** 2)  # one pixel off by 0.1 in [0, 1]
    check("video PSNR of one changed pixel", abs(psnr - want) < 1e-3 and abs(mx - 0.1) < 1e-6)
    check("video PSNR identical is inf", video_error(v, v)[0] == float("inf"))
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "t.safetensors")
        st_write(p, {"latents": ref, "video": v})
        back = st_read(p)
        check("safetensors round trip", np.array_equal(back["latents"], ref) and np.array_equal(back["video"], v))
        with open(p, "rb") as fh:
            n = struct.unpack("<Q", fh.read(8))[0]
        check("safetensors data 8-byte aligned", (8 + n) % 8 == 0)
        # a bf16 file as vgen's writer could make one
        bits = (ref.view(np.uint32) >> 16).astype("<u2")
        h = json.dumps({"latents": {"dtype": "BF16", "shape": list(ref.shape), "data_offsets": [0, bits.nbytes]}}).encode()
        h += b" " * (-len(h) % 8)
        with open(p, "wb") as fh:
            fh.write(struct.pack("<Q", len(h)) + h + bits.tobytes())
        check("safetensors bf16 read", np.allclose(st_read(p)["latents"], ref, rtol=1e-2, atol=1e-2))
        # a whole run on made-up renders: recipe, pairs, comparisons, table, JSON
        model = os.path.join(REPO, "tests", "golden", "wan21-tiny")
        j = os.path.join(tmp, "out", "acc.json")
        a = parse_args(["--model", model, "--json", j, "--shapes", "32x48x9", "--steps", "1,2", "--work",
                        os.path.join(tmp, "work"), "--vgen", os.path.join(tmp, "no-vgen"),
                        "--variant", "vgen_fp8_attn=precision=fp8;fp8_config.gemm=false", "--commit", "abc123"])
        check("flow shift from the checkpoint", a.flow_shift == 3.0)
        recipe = vgen_recipe(a.model, "cuda", (480, 832, 21), 4, a, "/l.safetensors", "/p.jsonl", "/o")
        y = to_yaml(recipe)
        check("recipe text", "initial_latents: \"/l.safetensors\"" in y and "guidance_scale: 1.0" in y and
              "save_tensors: true" in y and "flow_shift: 3.0" in y and "num_inference_steps: 4" in y)
        check("vgen command", vgen_command(a, "R", "O", ["precision=fp8"]) ==
              [a.vgen, "run", "--recipe", "R", "--out", "O", "--set", "precision=fp8"])
        names = ["diffusers_fp32", "diffusers_bf16", "vgen_bf16", "vgen_fp8", "vgen_fp8_attn"]
        pr = pairs_for(names, REFERENCE)
        check("pairs", ("vgen_fp8", "vgen_bf16") in pr and ("vgen_bf16", "diffusers_bf16") in pr and
              ("diffusers_bf16", REFERENCE) in pr and len(pr) == 4 + 2 + 1)
        latents, _ = make_inputs(a)
        lat0 = st_read(latents[(32, 48, 9)])["initial_latents"]
        check("initial latents shape and seed", list(lat0.shape) == [1, 16, 3, 4, 6] and
              np.array_equal(lat0, np.random.default_rng(0).standard_normal(lat0.shape, dtype=np.float32)))
        rec = base_record(a)
        cases = [Case((32, 48, 9), n, a.work) for n in a.steps]
        for c in cases:
            base = rng.standard_normal(lat0.shape).astype(np.float32)
            vid = np.clip(rng.standard_normal((1, 3, 9, 32, 48)), -1, 1).astype(np.float32)
            for k, name in enumerate(names):
                os.makedirs(c.render_dir(name), exist_ok=True)
                eps = 0.0 if k == 0 else 0.01 * k
                st_write(c.render_file(name), {"latents": base * (1 + eps), "video": np.clip(vid + eps, -1, 1)})
                rec["renders"].append({"name": name, "case": c.key, "status": "ok", "wall_seconds": 1.0})
        rec["renders"].append({"name": "vgen_fp8_attn", "case": cases[0].key, "status": "failed", "error": "x\nrc 3"})
        rec["renders"] = [r for r in rec["renders"] if not (r["name"] == "vgen_fp8_attn" and r["case"] ==
                                                            cases[0].key and r["status"] == "ok")]
        rec["comparisons"] = comparisons(a, cases, rec)
        rec["target"] = target_check(rec, a.reference)
        got = {(e["case"], e["render"], e["reference"]): e for e in rec["comparisons"]}
        e = got[(cases[0].key, "diffusers_bf16", REFERENCE)]
        check("made-up comparison numbers", abs(e["latents_rel_l2"] - 0.01) < 1e-6 and e["video_psnr_db"] > 0 and
              "reference_step_change_rms" in e)
        check("failed render left out", (cases[0].key, "vgen_fp8_attn", REFERENCE) not in got and
              (cases[1].key, "vgen_fp8_attn", "vgen_bf16") in got)
        check("target", rec["target"]["met"] is True and rec["target"]["values"] == {cases[0].key: e["latents_rel_l2"]})
        rec["complete"] = False
        write_json(j, rec)
        back = read_json(j)
        check("JSON written", back["commit"] == "abc123" and len(back["comparisons"]) == len(rec["comparisons"]))
        print(table(rec))
    return ok


def main():
    a = parse_args()
    if a.selftest:
        return 0 if selftest() else 1
    return run(a)


if __name__ == "__main__":
    sys.exit(main())
