#!/usr/bin/env python3
"""Writes a small random checkpoint of one --variant of make_random_checkpoint.py and checks the
pipeline folder: model_index.json, scheduler/ and image_processor/ are the recipes/models copy's,
tokenizer/ the fixture's, each config the published one with the sizes asked, each safetensors file
holds exactly the names and shapes the layout rule gives (BF16), random_init.json names the variant.

  checkpoint_variant_check.py VARIANT [SCRATCH_DIR]     (exit 77: skipped, numpy is not installed)
"""
import filecmp
import json
import os
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts", "bench"))
from wan_checkpoint_variants import VARIANTS, read_json, real_dir, variant_components  # noqa: E402

SMALL = ["--layers", "1", "--heads", "1", "--text-layers", "1", "--text-d-model", "64", "--jobs", "2"]


def headers(d):
    got = {}
    for fn in sorted(f for f in os.listdir(d) if f.endswith(".safetensors")):
        with open(os.path.join(d, fn), "rb") as f:
            h = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
        got.update({k: (v["dtype"], v["shape"]) for k, v in h.items() if k != "__metadata__"})
    return got


def same_folder(a, b):
    names = sorted(os.listdir(a))
    return names == sorted(os.listdir(b)) and all(filecmp.cmp(os.path.join(a, n), os.path.join(b, n), False)
                                                  for n in names)


def check(variant, out):
    errors = []
    real, fixture = real_dir(variant), VARIANTS[variant][0]
    comps = variant_components(variant)
    clip = ["--clip-layers", "2"] if any(c[0] == "image_encoder" for c in comps) else []
    cmd = [sys.executable, os.path.join(ROOT, "scripts", "bench", "make_random_checkpoint.py"),
           "--variant", variant, "--out", out, "--init", "trained-like"] + SMALL + clip
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    if not filecmp.cmp(os.path.join(out, "model_index.json"), os.path.join(real, "model_index.json"), False):
        errors.append("model_index.json is not the recipes/models copy's")
    for sub, src in (("scheduler", real), ("image_processor", real), ("tokenizer", fixture)):
        if os.path.isdir(os.path.join(src, sub)) != os.path.isdir(os.path.join(out, sub)):
            errors.append(f"{sub}/: present in one of {src} and the checkpoint only")
        elif os.path.isdir(os.path.join(src, sub)) and not same_folder(os.path.join(src, sub), os.path.join(out, sub)):
            errors.append(f"{sub}/ differs from {src}")
    for comp, fname, _, rule, _ in comps:
        cfg = read_json(os.path.join(out, comp, fname))
        published = read_json(os.path.join(real, comp, fname))
        sized = {"num_layers", "num_attention_heads", "ffn_dim", "text_dim", "added_kv_proj_dim", "d_model",
                 "num_heads", "d_ff", "num_hidden_layers"}
        moved = sorted(k for k in set(cfg) | set(published) if cfg.get(k) != published.get(k) and k not in sized)
        if moved:
            errors.append(f"{comp}/{fname}: keys other than the sizes differ from the published config: {moved}")
        want = {n: ("BF16", s) for n, s in rule(cfg)}
        if headers(os.path.join(out, comp)) != want:
            errors.append(f"{comp}: the safetensors names/shapes are not the layout rule's")
    if any(c[0] == "image_encoder" for c in comps):
        ie = read_json(os.path.join(out, "image_encoder", "config.json"))
        if ie["num_hidden_layers"] != 2:
            errors.append("--clip-layers 2 did not reach image_encoder/config.json")
        dit = read_json(os.path.join(out, "transformer", "config.json"))
        if dit["added_kv_proj_dim"] != dit["num_attention_heads"] * dit["attention_head_dim"]:
            errors.append("added_kv_proj_dim does not follow --heads")
    info = read_json(os.path.join(out, "random_init.json"))
    if info.get("variant") != variant or info.get("layers") != 1:
        errors.append(f"random_init.json: {info}")
    return errors


def main():
    variant = sys.argv[1]
    try:
        import numpy  # noqa: F401  (the writer's one dependency)
    except ImportError:
        print(f"skipped ({variant}): numpy is not installed")
        return 77
    with tempfile.TemporaryDirectory(dir=sys.argv[2] if len(sys.argv) > 2 else None) as tmp:
        errors = check(variant, os.path.join(tmp, variant))
    for e in errors:
        print(f"FAIL ({variant}): {e}")
    print(f"{'ok' if not errors else 'FAILED'} ({variant})")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
