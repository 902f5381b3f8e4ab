#!/usr/bin/env python3
"""Random LoRA adapter at the shapes of a Wan DiT checkpoint, in the original Wan names that
LightX2V's distill adapters use (diffusion_model.blocks.N.{self_attn,cross_attn}.{q,k,v,o}
.lora_down/.lora_up/.alpha, ffn.0 and ffn.2), for timing the merge at load. BENCHMARKS ONLY.

  python3 scripts/bench/make_random_lora.py --model build-gpu/random-wan21-14b --rank 64 --out l.safetensors

Shapes come from <model>/transformer/config.json (num_layers, num_attention_heads x
attention_head_dim, ffn_dim); values N(0, 0.01^2) in bf16, alpha = rank. Standard library only.
"""
import argparse
import json
import os
import random
import struct


def bf16_bytes(count, rng, std):
    # A table of 4096 bf16 normals, tiled by random offsets: cheap and not constant.
    table = bytearray()
    for _ in range(4096):
        f = struct.pack("<f", rng.gauss(0.0, std))
        table += f[2:4]
    out = bytearray()
    while len(out) < 2 * count:
        off = 2 * rng.randrange(4096)
        out += table[off:] + table[:off]
    return bytes(out[: 2 * count])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="Diffusers pipeline or transformer directory")
    ap.add_argument("--rank", type=int, default=64)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    cfg_path = os.path.join(a.model, "transformer", "config.json")
    if not os.path.exists(cfg_path):
        cfg_path = os.path.join(a.model, "config.json")
    with open(cfg_path) as f:
        c = json.load(f)
    dim = c["num_attention_heads"] * c["attention_head_dim"]
    ffn = c["ffn_dim"]
    rng = random.Random(a.seed)
    shapes = {}  # name -> (shape, dtype)
    for i in range(c["num_layers"]):
        for attn in ("self_attn", "cross_attn"):
            for m in ("q", "k", "v", "o"):
                p = f"diffusion_model.blocks.{i}.{attn}.{m}"
                shapes[p + ".lora_down.weight"] = ([a.rank, dim], "BF16")
                shapes[p + ".lora_up.weight"] = ([dim, a.rank], "BF16")
                shapes[p + ".alpha"] = ([], "F32")
        shapes[f"diffusion_model.blocks.{i}.ffn.0.lora_down.weight"] = ([a.rank, dim], "BF16")
        shapes[f"diffusion_model.blocks.{i}.ffn.0.lora_up.weight"] = ([ffn, a.rank], "BF16")
        shapes[f"diffusion_model.blocks.{i}.ffn.0.alpha"] = ([], "F32")
        shapes[f"diffusion_model.blocks.{i}.ffn.2.lora_down.weight"] = ([a.rank, ffn], "BF16")
        shapes[f"diffusion_model.blocks.{i}.ffn.2.lora_up.weight"] = ([dim, a.rank], "BF16")
        shapes[f"diffusion_model.blocks.{i}.ffn.2.alpha"] = ([], "F32")
    header, off = {}, 0
    for name, (shape, dt) in shapes.items():
        n = 1
        for s in shape:
            n *= s
        size = n * (2 if dt == "BF16" else 4)
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + size]}
        off += size
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(a.out, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for name, (shape, dt) in shapes.items():
            n = 1
            for s in shape:
                n *= s
            if dt == "F32":
                f.write(struct.pack("<f", float(a.rank)))
            else:
                f.write(bf16_bytes(n, rng, 0.01))
    print(f"{a.out}: {len(shapes)} tensors, {off / 1e9:.3f} GB, rank {a.rank}")


if __name__ == "__main__":
    main()
