#!/usr/bin/env python3
"""Random-weight Wan checkpoint (Wan2.1-T2V-14B by default) in the Diffusers layout, for timing and accuracy runs.

Writes a WanPipeline directory (model_index.json, transformer/, text_encoder/, vae/, tokenizer/,
scheduler/) with the tensor names and shapes of Wan2.1-T2V-14B (WanTransformer3DModel, 40 layers,
dim 5120 = 40 heads x 128, ffn 13824), UMT5-XXL (UMT5EncoderModel, d_model 4096, 24 layers,
vocab 256384) and the Wan 2.1 VAE (AutoencoderKLWan, base_dim 96), every tensor in BF16, so that a
GPU machine without internet can run `vgen run` end to end at real size (720x1280x81, 40 steps)
and time it. BENCHMARKS ONLY: the weights are random, the videos are noise.

--variant makes the other published layouts, each from the config-only copy of its checkpoint in
recipes/models (model_index.json, scheduler/, image_processor/ and every config copied or sized
from there; recipes/models/README.md says where they come from):
  i2v-14b    Wan2.1-I2V-14B-480P/720P-Diffusers: WanImageToVideoPipeline, transformer in_channels 36,
             image_dim 1280, added_kv_proj_dim 5120; image_encoder/ the ViT-H/14 CLIP vision tower
             (CLIPVisionModelWithProjection: 32 layers, hidden 1280, 16 heads, MLP 5120, patch 14,
             224 px, projection 1024; tensors under vision_model.), image_processor/
  flf2v-14b  Wan2.1-FLF2V-14B-720P-diffusers: as i2v-14b, pos_embed_seq_len 514 (two images' tokens)
  i2v-a14b   Wan2.2-I2V-A14B-Diffusers: two experts (transformer_2), in_channels 36, boundary_ratio 0.9,
             no image encoder
  ti2v-5b    Wan2.2-TI2V-5B-Diffusers: WanPipeline with expand_timesteps, 30 layers, dim 3072 = 24 heads
             x 128, ffn 14336, in/out channels 48; the Wan 2.2 VAE (is_residual, z 48, base_dim 160,
             decoder_base_dim 256, patch_size 2, 12 channels in and out)
  cosmos3-nano, cosmos3-super  Cosmos3OmniPipeline (recipes/models/cosmos3-*): Cosmos3OmniTransformer
             under its flat layers.N.* names (lm_head, sound and action heads included), the Wan 2.2
             VAE, text_tokenizer/ from the real-vocabulary Qwen fixture (cosmos3_checkpoint.py says
             how); Nano 30.3 GB + 1.4 GB, Super 128.0 GB + 1.4 GB; --init normal only
--layers, --heads, --text-layers, --text-d-model apply to every Wan variant, --clip-layers to the CLIP
tower; --experts 2 to t2v only (a Wan2.2-T2V-A14B); the Cosmos 3 variants take --layers and --heads.

  python3 scripts/bench/make_random_checkpoint.py --out /tmp/wan14b-random            # ~40 GB
  python3 scripts/bench/make_random_checkpoint.py --out D --layers 1 --text-layers 1  # ~3.9 GB
  python3 scripts/bench/make_random_checkpoint.py --out D --init trained-like --text-layers 2  # accuracy runs
  python3 scripts/bench/make_random_checkpoint.py --out D --dry-run    # sizes only, writes nothing
  python3 scripts/bench/make_random_checkpoint.py --out D --variant i2v-14b --clip-layers 2 --layers 1
  python3 scripts/bench/make_random_checkpoint.py --selftest   # names/shapes rules == tiny fixtures
  vgen run --recipe recipes/1gpu-14b.yaml --set model=/tmp/wan14b-random

Sizes (bf16): transformer 14,288,491,584 params = 28.6 GB, text encoder 5,680,910,336 = 11.4 GB,
VAE 126,892,531 = 0.25 GB (encoder included; vgen reads only the decoder). Needs numpy only.
On a GPU machine without network access generate it there (it is too big to copy): 40.2 GB of
the 64 GiB disk of a one-H200 machine; the writer is disk-bound (~0.4-0.6 GB/s with 2 jobs here).
The variants at full size: i2v-14b 45.7 GB (transformer 16,394,878,784 params, CLIP 632,076,800),
flf2v-14b 45.7 GB, ti2v-5b 22.8 GB (transformer 4,999,787,712, Wan 2.2 VAE 704,688,668), i2v-a14b
68.8 GB: more than a one-GPU machine's disk (fewer --text-layers or --layers, or a bigger disk).

Names/shapes (the rules of wan_checkpoint_layout.py) follow vgen's loaders (lib/model/wan/:
dit/transformer_weights.cpp, text/umt5.cpp, vae/vae_decoder.cpp, vae/vae_layers.cpp; the CLIP tower
lib/model/clip/) and diffusers' layouts where vgen reads nothing yet (the VAE encoder, the Wan 2.2
VAE); `--selftest` applies the rules to each variant's tiny fixture and checks they give exactly its
safetensors names and shapes, and dry-runs every variant at real size against the parameter counts
of diffusers' and transformers' models built from the recipes/models configs. Files: shards of at
most --shard-gb (default 5; 0 = one file) named as save_pretrained does (<stem>-0000k-of-0000n
.safetensors + <stem>.safetensors.index.json; one shard: <stem>.safetensors; stem
diffusion_pytorch_model or model), both read by vgen's WeightStore; written by --jobs processes in
64M-element chunks. The disk must hold the total (checked before writing).

Values (--init normal, the default): matrices, conv kernels, embeddings, scale_shift_tables,
relative attention biases and the biases are i.i.d. N(0, std^2) (std = --std, 0.02; small random
biases rather than 0 so no epilogue is trivial); RMSNorm/LayerNorm/VAE gamma weights 1.0, LayerNorm
biases 0. Finite over 40 layers: each DiT sublayer reads a normalized input (q/k RMSNorm keeps
logits ~N(0,1)) and adds ~std*sqrt(fan_in) ~1.4 (x a gate ~0.1-0.3), a random walk of a few units
after 40 blocks. UMT5 attention is unscaled, so logits are ~10 (near one-hot softmax, finite); its
residual reaches ~10 after 24 layers. The VAE RMS-normalizes before each 3x3x3 conv and clamps its
output. Fine for timing, useless for accuracy: that UMT5 is chaotic (bf16 against fp32 text
embeddings differ by O(1)) and the ungated cross-attention carries it into the latents, so
diffusers' bf16 render differs from its fp32 render by latents rel-L2 ~0.4 after one step.

Values (--init trained-like): scaled as trained models are initialised, so that precision
differences are measurable (scripts/bench/fp8_accuracy.py; the reasoning is at TRAINED_LIKE in
wan_checkpoint_layout.py):
DiT and VAE weights N(0, 1/fan_in) (the residual branches' output projections x --gain), biases
N(0, 0.01^2), scale_shift_tables randn/sqrt(dim) as Wan, norm weights 1; UMT5 as T5 initialises;
the CLIP tower's linears and the image embedder fan-in, its class token and FLF2V's image position
embedding randn/sqrt(width).
Same generator, seeds and speed as normal (only each tensor's std differs).

Generator: per tensor, a table of 65536 bf16 values (std*N(0,1), round to nearest even) indexed
by raw PCG64 bits: i.i.d. draws from a 65536-point normal sample, ~300M elements/s per process
(float32 normal + rounding: ~45M/s); deterministic for a --seed (block i's weights do not depend on
--layers). --out gets a random_init.json (init, gain, std, seed, layer counts; the variant and
CLIP layers but for t2v) beside model_index.json.

tokenizer/: copied from --from (default: the variant's tiny fixture, tests/golden/wan21-tiny for t2v,
tests/golden-i2v/* for the others); t2v also copies scheduler/ and model_index.json from there. The
fixtures' SentencePiece model has 1,000 pieces (ids 0..999, all below UMT5-XXL's 256,384 embedding
rows), so prompts tokenize differently from the real UMT5 tokenizer (other token counts): the
text-encoder time may differ a little from a real checkpoint's; the DiT always sees
max_sequence_length text rows, so denoising is unaffected. Scheduler: UniPC, flow_shift 3.0 (as the
real Wan2.1 checkpoint; the variants' own: FLF2V 16.0, TI2V 5.0).
"""
import argparse
import json
import math
import os
import shutil
import struct
import sys
import time
from multiprocessing import Pool

import cosmos3_checkpoint as cosmos3
from wan_checkpoint_layout import BIAS_STD, value_spec
from wan_checkpoint_variants import (DIT_CFG, REAL_PARAMS, TEXT_ENCODER_PARAMS, UMT5_CFG, VARIANTS, read_json,
                                     real_dir, real_dit, variant_components)


CHUNK = 64 << 20  # elements per generated chunk


def size_overrides(a):
    """Config keys set by --layers, --heads, --text-d-model, --text-layers and --clip-layers."""
    dit = real_dit(a.variant)
    t = {"num_layers": a.layers, "num_attention_heads": a.heads,
         "ffn_dim": round(dit["ffn_dim"] * a.heads / dit["num_attention_heads"]), "text_dim": a.text_d_model}
    if dit.get("added_kv_proj_dim"):  # projects the image embedder's output into the DiT's width
        t["added_kv_proj_dim"] = a.heads * dit["attention_head_dim"]
    over = {"transformer": t, "transformer_2": t,
            "text_encoder": {"num_layers": a.text_layers, "d_model": a.text_d_model, "num_heads": a.text_d_model // 64,
                             "d_ff": a.text_d_model * UMT5_CFG["d_ff"] // UMT5_CFG["d_model"]}}
    if a.clip_layers is not None:
        over["image_encoder"] = {"num_hidden_layers": a.clip_layers}
    return over


def is_cosmos3(a):
    return a.variant in cosmos3.VARIANTS


def wan_tensors(a):
    """(component, config file, stem, config, [(name, shape, seed, value spec)]) of a Wan variant."""
    over = size_overrides(a)
    for ci, (comp, fname, stem, rule, cfg_over) in enumerate(variant_components(a.variant, a.experts)):
        if VARIANTS[a.variant][1] is None:
            src_comp = "transformer" if comp == "transformer_2" else comp
            cfg = {**read_json(os.path.join(a.src, src_comp, fname)), **cfg_over, **over.get(comp, {})}
        else:
            cfg = {**read_json(os.path.join(real_dir(a.variant), comp, fname)), **over.get(comp, {})}
        yield comp, fname, stem, cfg, [(n, s, [a.seed, ci, i], value_spec(a.init, comp, n, s, cfg, a.std, a.gain))
                                       for i, (n, s) in enumerate(rule(cfg))]


def cosmos3_tensors(a):
    """The same for a Cosmos 3 variant (cosmos3_checkpoint.py)."""
    for ci, (comp, fname, stem, cfg, names) in enumerate(cosmos3.components(a.variant, a.layers, a.heads)):
        yield comp, fname, stem, cfg, [(n, s, [a.seed, ci, i], cosmos3.value_spec(n, s, a.std))
                                       for i, (n, s) in enumerate(names)]


def plan(a, log=print):
    """[(component, config file, stem, config, shards)] of --variant at the sizes asked, and its bytes."""
    plans, total = [], 0
    for comp, fname, stem, cfg, tensors in (cosmos3_tensors(a) if is_cosmos3(a) else wan_tensors(a)):
        params = sum(math.prod(s) for _, s, _, _ in tensors)
        shards = plan_shards(tensors, int(a.shard_gb * 1e9))
        total += 2 * params
        log(f"{comp:13s} {len(tensors):5d} tensors {params:15,d} params {2 * params:17,d} bytes "
            f"({2 * params / 1e9:.2f} GB) in {len(shards)} file(s)")
        plans.append((comp, fname, stem, cfg, shards))
    log(f"{'total':13s} {total:45,d} bytes ({total / 1e9:.2f} GB)")
    return plans, total


def to_bf16_bits(x):
    import numpy as np  # only the writer needs numpy (--selftest and --dry-run run without it)
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even


def write_tensor(f, shape, seed, spec):
    import numpy as np
    n = math.prod(shape)
    kind, v = spec
    if kind == "const":
        f.write(np.full(n, to_bf16_bits(np.float32(v)), dtype=np.uint16).tobytes())
        return
    rng = np.random.default_rng(seed)
    table = to_bf16_bits(np.float32(v) * rng.standard_normal(65536, dtype=np.float32))
    for off in range(0, n, CHUNK):
        m = min(CHUNK, n - off)
        idx = rng.bit_generator.random_raw((m + 3) // 4).view(np.uint16)[:m]
        f.write(memoryview(table[idx]))


def nbytes(shape):
    return 2 * math.prod(shape)


def write_shard(job):
    path, tensors = job
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, shape, _, _ in tensors:
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + nbytes(shape)]}
        off += nbytes(shape)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-(len(h) + 8) % 8)  # data section starts 8-byte aligned
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for _, shape, seed, spec in tensors:
            write_tensor(f, shape, seed, spec)
        assert f.tell() == 8 + len(h) + off, path
    os.replace(path + ".tmp", path)
    return off


def plan_shards(tensors, max_bytes):
    shards, cur, size = [], [], 0
    for t in tensors:
        if cur and max_bytes > 0 and size + nbytes(t[1]) > max_bytes:
            shards.append(cur)
            cur, size = [], 0
        cur.append(t)
        size += nbytes(t[1])
    return shards + [cur]


def fixture_shapes(d):
    got = {}
    for fn in [fn for fn in sorted(os.listdir(d)) if fn.endswith(".safetensors")]:
        with open(os.path.join(d, fn), "rb") as f:
            h = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
        got.update({k: v["shape"] for k, v in h.items() if k != "__metadata__"})
    return got


def selftest_layout(variant, src):
    """The rules on the fixture's configs give exactly its safetensors names and shapes, and --init
    trained-like has a finite rule for every tensor, at the fixture's sizes and at the real ones."""
    ok = True
    for comp, fname, _, rule, cfg_over in variant_components(variant, experts=2):
        d = os.path.join(src, comp)
        if not os.path.isdir(d):  # t2v's fixture has one expert
            continue
        got, fixture = fixture_shapes(d), read_json(os.path.join(d, fname))
        mine = dict(rule(fixture))
        ok &= mine == got
        print(f"selftest {variant} {comp}: {len(mine)} derived, {len(got)} in {d}: {'OK' if mine == got else 'MISMATCH'}")
        for k in sorted(k for k in set(mine) | set(got) if mine.get(k) != got.get(k)):
            print(f"  {k}: derived {mine.get(k)} fixture {got.get(k)}")
        real = ({**fixture, **cfg_over} if VARIANTS[variant][1] is None
                else read_json(os.path.join(real_dir(variant), comp, fname)))
        for label, cfg in (("fixture", fixture), ("real", real)):
            try:
                specs = {n: value_spec("trained-like", comp, n, sh, cfg, None, 0.5) for n, sh in rule(cfg)}
                bad = [n for n, (k, v) in specs.items() if not (v >= 0 and math.isfinite(v))]
            except KeyError as e:
                specs, bad = {}, [str(e)]
            ok &= not bad
            print(f"selftest {variant} trained-like {comp} ({label}): {len(specs)} tensors: {'OK' if not bad else bad[:3]}")
    return ok


def selftest_dry_runs(ap, variant):
    """Dry runs: at the real sizes the parameters of diffusers' models (REAL_PARAMS); small sizes keep
    the configs consistent (the image path's projections follow --heads, --clip-layers reaches CLIP)."""
    ok = True
    plans, _ = plan(finish_args(ap, ap.parse_args(["--variant", variant, "--dry-run"])), log=lambda _: None)
    want = {**REAL_PARAMS[variant], "text_encoder": TEXT_ENCODER_PARAMS}
    got = {comp: sum(math.prod(t[1]) for sh in shards for t in sh) for comp, _, _, _, shards in plans}
    ok &= got == want
    print(f"selftest {variant} dry run (real sizes): {'OK' if got == want else f'MISMATCH {got} != {want}'}")
    small = ["--variant", variant, "--dry-run", "--layers", "2", "--heads", "3", "--text-layers", "1"]
    has_clip = any(p[0] == "image_encoder" for p in plans)
    plans, _ = plan(finish_args(ap, ap.parse_args(small + (["--clip-layers", "2"] if has_clip else []))),
                    log=lambda _: None)
    for comp, _, _, cfg, shards in plans:
        names = [t[0] for sh in shards for t in sh]
        good = not comp.startswith("transformer") or (
            cfg["num_layers"] == 2 and cfg["num_attention_heads"] * cfg["attention_head_dim"] == 384
            and cfg.get("added_kv_proj_dim") in (None, 384) and not any(n.startswith("blocks.2.") for n in names))
        if comp == "image_encoder":
            good = cfg["num_hidden_layers"] == 2 and not any(".layers.2." in n for n in names)
        ok &= good
        if not good:
            print(f"selftest {variant} dry run (small) {comp}: {cfg}: MISMATCH")
    print(f"selftest {variant} dry run (small): {'OK' if ok else 'MISMATCH'}")
    return ok


def selftest_trained_like_values(src):
    """A few trained-like stds at the real t2v sizes, by hand."""
    ok = True
    cfg = {**read_json(os.path.join(src, "text_encoder", "config.json")), **UMT5_CFG}
    dcfg = {**read_json(os.path.join(src, "transformer", "config.json")), **DIT_CFG}
    want = [("text_encoder", "encoder.block.0.layer.0.SelfAttention.q.weight", [4096, 4096], cfg, 1 / 512),
            ("text_encoder", "encoder.block.0.layer.1.DenseReluDense.wo.weight", [4096, 10240], cfg, 10240 ** -0.5),
            ("text_encoder", "shared.weight", [256384, 4096], cfg, 1.0),
            ("transformer", "blocks.0.ffn.net.2.weight", [5120, 13824], dcfg, 0.5 / 13824 ** 0.5),
            ("transformer", "blocks.0.ffn.net.0.proj.weight", [13824, 5120], dcfg, 5120 ** -0.5),
            ("transformer", "patch_embedding.weight", [5120, 16, 1, 2, 2], dcfg, 1 / 8),
            ("transformer", "blocks.3.scale_shift_table", [1, 6, 5120], dcfg, 5120 ** -0.5),
            ("transformer", "blocks.3.norm_q.weight", [5120], dcfg, None),
            ("transformer", "blocks.3.attn2.norm_added_k.weight", [5120], dcfg, None),
            ("transformer", "blocks.3.attn2.add_k_proj.weight", [5120, 5120], dcfg, 5120 ** -0.5),
            ("transformer", "condition_embedder.image_embedder.pos_embed", [1, 514, 1280], dcfg, 1280 ** -0.5),
            ("image_encoder", "vision_model.embeddings.class_embedding", [1280], {}, 1280 ** -0.5),
            ("image_encoder", "vision_model.encoder.layers.0.mlp.fc2.weight", [1280, 5120], {}, 5120 ** -0.5),
            ("image_encoder", "vision_model.encoder.layers.0.layer_norm1.weight", [1280], {}, None),
            ("vae", "decoder.conv_in.weight", [384, 16, 3, 3, 3], {}, (16 * 27) ** -0.5)]
    for comp, n, sh, c, std in want:
        got = value_spec("trained-like", comp, n, sh, c, None, 0.5)
        good = got == ("const", 1.0) if std is None else (got[0] == "normal" and abs(got[1] - std) < 1e-12 * std)
        ok &= good
        if not good:
            print(f"selftest trained-like {comp} {n}: {got}, expected std {std}: MISMATCH")
    return ok


def selftest(ap, a):
    """Every variant (--from replaces the fixture of --variant); no GPU, nothing written."""
    ok = True
    for v, (fixture, _) in VARIANTS.items():
        src = a.src if v == a.variant and a.src else fixture
        ok &= selftest_layout(v, src)
        ok &= selftest_dry_runs(ap, v)
    ok &= selftest_trained_like_values(VARIANTS["t2v"][0] if a.variant != "t2v" else a.src)
    ok &= cosmos3.selftest()
    for v in cosmos3.VARIANTS:  # through the options: the dry run at real size, and a cut depth
        for extra, want in (([], cosmos3.REAL_PARAMS[v]), (["--layers", "1"], None)):
            plans, _ = plan(finish_args(ap, ap.parse_args(["--variant", v, "--dry-run"] + extra)), log=lambda _: None)
            got = {comp: sum(math.prod(t[1]) for sh in shards for t in sh) for comp, _, _, _, shards in plans}
            good = got == want if want else plans[0][3]["num_hidden_layers"] == 1
            ok &= good
            print(f"selftest {v} dry run {' '.join(extra) or '(real sizes)'}: {'OK' if good else f'MISMATCH {got}'}")
    print(f"selftest: {'OK' if ok else 'FAILED'}")
    return ok


def build_parser():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="output pipeline directory (required unless --selftest)")
    ap.add_argument("--variant", choices=tuple(VARIANTS) + tuple(cosmos3.VARIANTS), default="t2v",
                    help="t2v (default): Wan2.1-T2V-14B (--experts 2: Wan2.2-T2V-A14B); i2v-14b: Wan2.1-I2V-14B "
                         "(480P/720P, with the CLIP image_encoder); flf2v-14b: Wan2.1-FLF2V-14B-720P; i2v-a14b: "
                         "Wan2.2-I2V-A14B (two experts, no image encoder); ti2v-5b: Wan2.2-TI2V-5B (the Wan 2.2 "
                         "VAE); cosmos3-nano, cosmos3-super: Cosmos3OmniPipeline. Configs, scheduler and "
                         "model_index.json of the non-t2v variants come from recipes/models")
    ap.add_argument("--layers", type=int, default=None, help="transformer blocks (default: the checkpoint's, 40; TI2V 30)")
    ap.add_argument("--text-layers", type=int, default=None, help="UMT5 layers (default 24)")
    ap.add_argument("--clip-layers", type=int, default=None,
                    help="CLIP vision layers of the image_encoder (i2v-14b, flf2v-14b; default 32)")
    ap.add_argument("--heads", type=int, default=None,
                    help="DiT attention heads (default: the checkpoint's, 40: the 14B's 5120 channels; TI2V 24); "
                         "head dim stays 128 and ffn_dim scales along (round(ffn_dim * heads / the checkpoint's "
                         "heads)), as does added_kv_proj_dim. Fewer heads make a narrow model of the same depth and "
                         "init, e.g. for CPU runs of the fp8 emulation")
    ap.add_argument("--text-d-model", type=int, default=None,
                    help="UMT5 d_model (default 4096), and the DiT's text_dim with it: num_heads d_model/64, "
                         "d_ff 2.5 * d_model; a multiple of 64")
    ap.add_argument("--experts", type=int, choices=(1, 2), default=None,
                    help="--variant t2v: 2 makes a Wan2.2-A14B-shaped pipeline, a second expert transformer_2 of the "
                         "same shapes (other random values) and boundary_ratio 0.875 in model_index.json")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--init", choices=("normal", "trained-like"), default="normal",
                    help="normal (default): every random tensor N(0, --std^2), for timing; trained-like: "
                         "scaled as trained models are initialised (fan-in DiT and VAE, T5's UMT5 init), so "
                         "that bf16/fp8 differences are measurable (the docstring and TRAINED_LIKE say how)")
    ap.add_argument("--std", type=float, default=None,
                    help="--init normal: std of the random tensors (default 0.02)")
    ap.add_argument("--gain", type=float, default=None,
                    help="--init trained-like: scale of the DiT's residual-branch output projections "
                         "(attn1/attn2 to_out.0, ffn.net.2; std gain/sqrt(fan_in)), so of every block's update "
                         "(default 1.0: plain fan-in, FFN updates ~0.15 of the residual stream)")
    ap.add_argument("--from", dest="src", default=None,
                    help="pipeline dir to copy tokenizer/ from (default: the variant's tiny fixture, "
                         "tests/golden/wan21-tiny for t2v); for t2v also scheduler/, model_index.json and config keys")
    ap.add_argument("--shard-gb", type=float, default=5.0, help="max shard size in GB (0: one file each)")
    ap.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1), help="writer processes")
    ap.add_argument("--dry-run", action="store_true", help="print the sizes, write nothing")
    ap.add_argument("--overwrite", action="store_true", help="replace the component folders in --out")
    ap.add_argument("--selftest", action="store_true",
                    help="check the shape rules against the fixtures' files and dry-run every variant")
    return ap


def finish_cosmos3_args(ap, a):
    """The options a Cosmos 3 variant takes (--layers, --heads, --std) and their defaults."""
    given = [o for o, v in (("--text-layers", a.text_layers), ("--text-d-model", a.text_d_model),
                            ("--clip-layers", a.clip_layers), ("--experts", a.experts), ("--from", a.src),
                            ("--gain", a.gain)) if v is not None]
    if given or a.init != "normal":
        ap.error(f"--variant {a.variant} takes --layers, --heads and --init normal only, not {given or ['--init']}")
    a.std = 0.02 if a.std is None else a.std
    real = cosmos3.read_json(os.path.join(cosmos3.real_dir(a.variant), "transformer", "config.json"))
    a.layers = real["num_hidden_layers"] if a.layers is None else a.layers
    a.heads = real["num_attention_heads"] if a.heads is None else a.heads
    if a.layers < 1:
        ap.error("--layers must be at least 1")
    try:
        cosmos3.size_overrides(real, a.layers, a.heads)
    except ValueError as e:
        ap.error(str(e))
    a.experts, a.text_layers, a.text_d_model = 1, None, None
    return a


def finish_args(ap, a):
    """Checks the options and resolves the variant's defaults."""
    if is_cosmos3(a):
        return finish_cosmos3_args(ap, a)
    a.text_layers = 24 if a.text_layers is None else a.text_layers
    a.text_d_model = 4096 if a.text_d_model is None else a.text_d_model
    if a.init == "normal":
        if a.gain is not None:
            ap.error("--gain applies to --init trained-like only")
        a.std = 0.02 if a.std is None else a.std
    else:
        if a.std is not None:
            ap.error("--std applies to --init normal only (trained-like scales each tensor by its fan-in)")
        a.gain = 1.0 if a.gain is None else a.gain
        if not (a.gain > 0 and math.isfinite(a.gain)):
            ap.error("--gain must be a finite number > 0")
    if a.variant != "t2v" and a.experts is not None:
        ap.error("--experts applies to --variant t2v (the other variants have their checkpoint's experts)")
    comps = [c[0] for c in variant_components(a.variant, a.experts or 1)]
    a.experts = a.experts or (2 if "transformer_2" in comps else 1)
    if a.clip_layers is not None and "image_encoder" not in comps:
        ap.error(f"--clip-layers: --variant {a.variant} has no image_encoder")
    if a.clip_layers is not None and a.clip_layers < 2:
        ap.error("--clip-layers must be at least 2 (image-to-video reads the penultimate layer's output)")
    dit = real_dit(a.variant)
    a.layers = dit["num_layers"] if a.layers is None else a.layers
    a.heads = dit["num_attention_heads"] if a.heads is None else a.heads
    if a.heads < 1:
        ap.error("--heads must be at least 1")
    if a.text_d_model < 64 or a.text_d_model % 64:
        ap.error("--text-d-model must be a positive multiple of 64")
    a.src = VARIANTS[a.variant][0] if a.src is None else a.src
    return a


def copy_folder(src, dst):
    """Plain copies (the fixtures' files are read-only)."""
    os.makedirs(dst, exist_ok=True)
    for fn in os.listdir(src):
        shutil.copyfile(os.path.join(src, fn), os.path.join(dst, fn))


def write_config(d, fname, cfg):
    with open(os.path.join(d, fname), "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")


def shard_jobs(a, plans):
    """Writes each component's config and shard index; the (path, tensors) of every shard."""
    jobs = []
    for comp, fname, stem, cfg, shards in plans:
        d = os.path.join(a.out, comp)
        os.makedirs(d)
        write_config(d, fname, cfg)
        n = len(shards)
        names = [f"{stem}.safetensors"] if n == 1 else [f"{stem}-{k + 1:05d}-of-{n:05d}.safetensors" for k in range(n)]
        if n > 1:
            index = {"metadata": {"total_size": sum(nbytes(t[1]) for sh in shards for t in sh)},
                     "weight_map": {t[0]: fn for fn, sh in zip(names, shards) for t in sh}}
            with open(os.path.join(d, f"{stem}.safetensors.index.json"), "w") as f:
                json.dump(index, f, indent=2)
        jobs += [(os.path.join(d, fn), sh) for fn, sh in zip(names, shards)]
    return sorted(jobs, key=lambda j: -sum(nbytes(t[1]) for t in j[1]))  # biggest first


def clear_out(a, plans, index_path, init_path):
    if os.path.exists(index_path):  # written last: its presence marks a complete checkpoint
        if not a.overwrite:
            sys.exit(f"{index_path} exists (pass --overwrite to replace the checkpoint)")
        os.remove(index_path)
    if os.path.exists(init_path):
        os.remove(init_path)
    for comp, *_ in plans:
        d = os.path.join(a.out, comp)
        if os.path.exists(d):
            if not a.overwrite:
                sys.exit(f"{d} exists (pass --overwrite to replace it)")
            shutil.rmtree(d)


def write_index(a, index_path):
    """model_index.json, last: the checkpoint is complete."""
    if is_cosmos3(a):
        cosmos3.write_index(a.variant, index_path)
        return
    if VARIANTS[a.variant][1] is not None:
        shutil.copyfile(os.path.join(real_dir(a.variant), "model_index.json"), index_path)
        return
    index = read_json(os.path.join(a.src, "model_index.json"))
    if a.experts == 2:  # Wan2.2-A14B: the low-noise expert and its switch point
        index["transformer_2"] = list(index["transformer"])
        index["boundary_ratio"] = 0.875
    with open(index_path, "w") as f:
        json.dump(index, f, indent=2)
        f.write("\n")


def main():
    ap = build_parser()
    a = finish_args(ap, ap.parse_args())
    if a.selftest:
        return 0 if selftest(ap, a) else 1
    if not a.out:
        ap.error("--out is required")
    plans, total = plan(a)
    print(f"init {a.init}: " + (f"std {a.std}" if a.init == "normal" else f"gain {a.gain}, biases std {BIAS_STD}"))
    if a.dry_run:
        return 0
    try:
        import numpy  # noqa: F401  (the writer needs it: fail before anything is written)
    except ImportError:
        sys.exit("numpy is needed to write the weights (pip install numpy)")
    os.makedirs(a.out, exist_ok=True)
    index_path = os.path.join(a.out, "model_index.json")
    init_path = os.path.join(a.out, "random_init.json")
    clear_out(a, plans, index_path, init_path)
    free = shutil.disk_usage(a.out).free
    if free < total * 1.02:
        sys.exit(f"not enough disk space in {a.out}: {free / 1e9:.1f} GB free, {total / 1e9:.1f} GB needed")
    real = is_cosmos3(a) or VARIANTS[a.variant][1] and real_dir(a.variant)
    if is_cosmos3(a):
        cosmos3.write_extras(a.variant, a.out)
    else:
        copy_folder(os.path.join(a.src, "tokenizer"), os.path.join(a.out, "tokenizer"))
        copy_folder(os.path.join(real or a.src, "scheduler"), os.path.join(a.out, "scheduler"))
    if real and not is_cosmos3(a) and os.path.isdir(os.path.join(real, "image_processor")):
        copy_folder(os.path.join(real, "image_processor"), os.path.join(a.out, "image_processor"))
    jobs = shard_jobs(a, plans)
    t0 = time.time()
    with Pool(max(1, min(a.jobs, len(jobs)))) as pool:
        written = sum(pool.imap_unordered(write_shard, jobs))
    dt = time.time() - t0
    info = {"init": a.init, "std": a.std, "gain": a.gain, "bias_std": BIAS_STD if a.init != "normal" else None,
            "seed": a.seed, "layers": a.layers, "text_layers": a.text_layers, "experts": a.experts,
            "heads": a.heads, "text_d_model": a.text_d_model, "script": "scripts/bench/make_random_checkpoint.py"}
    if real:  # t2v's record keeps its keys
        info = {"variant": a.variant, **info, "clip_layers": a.clip_layers if a.clip_layers is not None else (
            next((c["num_hidden_layers"] for comp, _, _, c, _ in plans if comp == "image_encoder"), None))}
    with open(init_path, "w") as f:  # what fp8_accuracy.py records about the checkpoint
        json.dump(info, f, indent=2)
        f.write("\n")
    write_index(a, index_path)
    print(f"wrote {written:,d} bytes in {len(jobs)} file(s) to {a.out} in {dt:.1f} s "
          f"({written / dt / 1e6:.0f} MB/s, {written / 2 / dt / 1e6:.0f} M elements/s, {a.jobs} jobs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
