#!/usr/bin/env python3
"""Random-weight Wan2.1-T2V-14B checkpoint in the Diffusers layout, for timing and accuracy runs.

Writes a WanPipeline directory (model_index.json, transformer/, text_encoder/, vae/, tokenizer/,
scheduler/) with the tensor names and shapes of Wan2.1-T2V-14B (WanTransformer3DModel, 40 layers,
dim 5120 = 40 heads x 128, ffn 13824), UMT5-XXL (UMT5EncoderModel, d_model 4096, 24 layers,
vocab 256384) and the Wan 2.1 VAE (AutoencoderKLWan, base_dim 96), every tensor in BF16, so that a
GPU machine without internet can run `vgen run` end to end at real size (720x1280x81, 40 steps)
and time it. BENCHMARKS ONLY: the weights are random, the videos are noise.

  python3 scripts/bench/make_random_checkpoint.py --out /tmp/wan14b-random            # ~40 GB
  python3 scripts/bench/make_random_checkpoint.py --out D --layers 1 --text-layers 1  # ~3.9 GB
  python3 scripts/bench/make_random_checkpoint.py --out D --init trained-like --text-layers 2  # accuracy runs
  python3 scripts/bench/make_random_checkpoint.py --out D --dry-run    # sizes only, writes nothing
  python3 scripts/bench/make_random_checkpoint.py --selftest   # names/shapes rule == tiny fixture
  vgen run --recipe recipes/1gpu-14b.yaml --set model=/tmp/wan14b-random

Sizes (bf16): transformer 14,288,491,584 params = 28.6 GB, text encoder 5,680,910,336 = 11.4 GB,
VAE 126,892,531 = 0.25 GB (encoder included; vgen reads only the decoder). Needs numpy only.
On a GPU machine without network access generate it there (it is too big to copy): 40.2 GB of
the 64 GiB disk of a one-H200 machine; the writer is disk-bound (~0.4-0.6 GB/s with 2 jobs here).

Names/shapes follow vgen's loaders (lib/model/wan/: dit/transformer_weights.cpp, text/umt5.cpp,
vae/vae_decoder.cpp, vae/vae_layers.cpp) and diffusers' VAE encoder layout; `--selftest` applies the
same rules to the tiny fixture's configs and checks they give exactly its safetensors names and
shapes. Files: shards of at
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
differences are measurable (scripts/bench/fp8_accuracy.py; the reasoning is at TRAINED_LIKE below):
DiT and VAE weights N(0, 1/fan_in) (the residual branches' output projections x --gain), biases
N(0, 0.01^2), scale_shift_tables randn/sqrt(dim) as Wan, norm weights 1; UMT5 as T5 initialises.
Same generator, seeds and speed as normal (only each tensor's std differs).

Generator: per tensor, a table of 65536 bf16 values (std*N(0,1), round to nearest even) indexed
by raw PCG64 bits: i.i.d. draws from a 65536-point normal sample, ~300M elements/s per process
(float32 normal + rounding: ~45M/s); deterministic for a --seed (block i's weights do not depend on
--layers). --out gets a random_init.json (init, gain, std, seed, layer counts) beside
model_index.json.

tokenizer/, scheduler/, model_index.json: copied from --from (default tests/golden/wan21-tiny). Its
SentencePiece model has 1,000 pieces (ids 0..999, all below UMT5-XXL's 256,384 embedding rows), so
prompts tokenize differently from the real UMT5 tokenizer (other token counts): the text-encoder
time may differ a little from a real checkpoint's; the DiT always sees max_sequence_length text
rows, so denoising is unaffected. Scheduler: UniPC, flow_shift 3.0 (as the real Wan2.1 checkpoint).
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


REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CHUNK = 64 << 20  # elements per generated chunk

# Official values (shared/reference/wan_spec.md sections 1.1, 2.3, 5.1); other keys come from --from.
DIT_CFG = dict(num_attention_heads=40, attention_head_dim=128, ffn_dim=13824, num_layers=40,
               in_channels=16, out_channels=16, text_dim=4096, freq_dim=256, patch_size=[1, 2, 2],
               cross_attn_norm=True, qk_norm="rms_norm_across_heads", eps=1e-6, rope_max_seq_len=1024,
               image_dim=None, added_kv_proj_dim=None, pos_embed_seq_len=None)
UMT5_CFG = dict(d_model=4096, d_kv=64, num_heads=64, d_ff=10240, num_layers=24, num_decoder_layers=24,
                vocab_size=256384, relative_attention_num_buckets=32, relative_attention_max_distance=128,
                feed_forward_proj="gated-gelu", dense_act_fn="gelu_new", is_gated_act=True,
                layer_norm_epsilon=1e-6, dropout_rate=0.1, tie_word_embeddings=False, dtype="bfloat16",
                model_type="umt5")
VAE_CFG = dict(base_dim=96, decoder_base_dim=None, z_dim=16, dim_mult=[1, 2, 4, 4], num_res_blocks=2,
               attn_scales=[], temperal_downsample=[False, True, True], dropout=0.0, is_residual=False,
               in_channels=3, out_channels=3, patch_size=None, scale_factor_temporal=4,
               scale_factor_spatial=8)


def dit_tensors(c):
    D = c["num_attention_heads"] * c["attention_head_dim"]
    F, p = c["ffn_dim"], list(c["patch_size"])
    lin = lambda n, o, i: [(n + ".weight", [o, i]), (n + ".bias", [o])]
    t = [("patch_embedding.weight", [D, c["in_channels"]] + p), ("patch_embedding.bias", [D])]
    t += lin("condition_embedder.time_embedder.linear_1", D, c["freq_dim"])
    t += lin("condition_embedder.time_embedder.linear_2", D, D)
    t += lin("condition_embedder.time_proj", 6 * D, D)
    t += lin("condition_embedder.text_embedder.linear_1", D, c["text_dim"])
    t += lin("condition_embedder.text_embedder.linear_2", D, D)
    t += [("scale_shift_table", [1, 2, D])]
    t += lin("proj_out", c["out_channels"] * p[0] * p[1] * p[2], D)
    for i in range(c["num_layers"]):
        b = f"blocks.{i}."
        t += [(b + "scale_shift_table", [1, 6, D])]
        for a in ("attn1", "attn2"):
            for proj in ("to_q", "to_k", "to_v", "to_out.0"):
                t += lin(f"{b}{a}.{proj}", D, D)
            t += [(f"{b}{a}.norm_q.weight", [D]), (f"{b}{a}.norm_k.weight", [D])]
        if c.get("cross_attn_norm", True):
            t += [(b + "norm2.weight", [D]), (b + "norm2.bias", [D])]
        t += lin(b + "ffn.net.0.proj", F, D) + lin(b + "ffn.net.2", D, F)
    return t


def umt5_tensors(c):
    D, I, F, H = c["d_model"], c["num_heads"] * c["d_kv"], c["d_ff"], c["num_heads"]
    t = [("shared.weight", [c["vocab_size"], D])]
    for i in range(c["num_layers"]):
        a, f = f"encoder.block.{i}.layer.0.", f"encoder.block.{i}.layer.1."
        t += [(a + f"SelfAttention.{x}.weight", [I, D]) for x in "qkv"]
        t += [(a + "SelfAttention.o.weight", [D, I]),
              (a + "SelfAttention.relative_attention_bias.weight", [c["relative_attention_num_buckets"], H]),
              (a + "layer_norm.weight", [D]),
              (f + "DenseReluDense.wi_0.weight", [F, D]), (f + "DenseReluDense.wi_1.weight", [F, D]),
              (f + "DenseReluDense.wo.weight", [D, F]), (f + "layer_norm.weight", [D])]
    return t + [("encoder.final_layer_norm.weight", [D])]


def vae_tensors(c):
    conv = lambda n, o, i, k: [(n + ".weight", [o, i] + k), (n + ".bias", [o])]
    k3, k1 = [3, 3, 3], [1, 1, 1]

    def res(n, i, o):
        t = [(n + ".norm1.gamma", [i, 1, 1, 1])] + conv(n + ".conv1", o, i, k3)
        t += [(n + ".norm2.gamma", [o, 1, 1, 1])] + conv(n + ".conv2", o, o, k3)
        return t + (conv(n + ".conv_shortcut", o, i, k1) if i != o else [])

    def mid(n, d):
        t = res(n + ".resnets.0", d, d) + [(n + ".attentions.0.norm.gamma", [d, 1, 1])]
        t += conv(n + ".attentions.0.to_qkv", 3 * d, d, [1, 1]) + conv(n + ".attentions.0.proj", d, d, [1, 1])
        return t + res(n + ".resnets.1", d, d)

    z, base, mult, nr = c["z_dim"], c["base_dim"], c["dim_mult"], c["num_res_blocks"]
    tdown = c["temperal_downsample"]
    # Encoder (diffusers WanEncoder3d: flat down_blocks list; unused by vgen's T2V, kept for realism).
    dims = [base] + [base * m for m in mult]
    t, k = conv("encoder.conv_in", dims[0], c["in_channels"], k3), 0
    for i in range(len(mult)):
        cin, cout = dims[i], dims[i + 1]
        for _ in range(nr):
            t += res(f"encoder.down_blocks.{k}", cin, cout)
            cin, k = cout, k + 1
        if i != len(mult) - 1:
            t += conv(f"encoder.down_blocks.{k}.resample.1", cout, cout, [3, 3])
            if tdown[i]:
                t += conv(f"encoder.down_blocks.{k}.time_conv", cout, cout, [3, 1, 1])
            k += 1
    t += mid("encoder.mid_block", dims[-1]) + [("encoder.norm_out.gamma", [dims[-1], 1, 1, 1])]
    t += conv("encoder.conv_out", 2 * z, dims[-1], k3) + conv("quant_conv", 2 * z, 2 * z, k1)
    # Decoder, exactly as lib/model/wan/vae/vae_decoder.cpp loads it.
    db = c.get("decoder_base_dim") or base
    dd = [db * mult[-1]] + [db * m for m in reversed(mult)]
    tup = list(reversed(tdown))
    t += conv("post_quant_conv", z, z, k1) + conv("decoder.conv_in", dd[0], z, k3) + mid("decoder.mid_block", dd[0])
    for i in range(len(mult)):
        cin, cout, p = (dd[i] // 2 if i > 0 else dd[0]), dd[i + 1], f"decoder.up_blocks.{i}"
        for r in range(nr + 1):
            t += res(f"{p}.resnets.{r}", cin, cout)
            cin = cout
        if i != len(mult) - 1:
            if tup[i]:
                t += conv(f"{p}.upsamplers.0.time_conv", 2 * cout, cout, [3, 1, 1])
            t += conv(f"{p}.upsamplers.0.resample.1", cout // 2, cout, [3, 3])
    t += [("decoder.norm_out.gamma", [dd[-1], 1, 1, 1])] + conv("decoder.conv_out", c["out_channels"], dd[-1], k3)
    return t


# component folder, config file, weight file stem, tensor rule, config overrides
COMPONENTS = [("transformer", "config.json", "diffusion_pytorch_model", dit_tensors, DIT_CFG),
              ("text_encoder", "config.json", "model", umt5_tensors, UMT5_CFG),
              ("vae", "config.json", "diffusion_pytorch_model", vae_tensors, VAE_CFG)]


def fill_value(name):
    """1.0 for norm scales, 0.0 for LayerNorm biases, None for random."""
    if name.endswith(("norm_q.weight", "norm_k.weight", "layer_norm.weight", "norm2.weight", ".gamma")):
        return 1.0
    return 0.0 if name.endswith("norm2.bias") else None


# TRAINED_LIKE (--init trained-like). Why these scales. "The emulation" below is a numpy model of the
# forwards with these scales, bf16 rounding where diffusers rounds, against fp64: the DiT at dim 512
# (4 heads x 128, ffn 1382), 1024-2048 tokens, 40 blocks, one step from sigma 1; UMT5 at d_model 512
# with 2 and 24 layers.
# - What broke the normal init is the text encoder, not the DiT: with N(0, 0.02) UMT5's embeddings
#   are ~0.02 and its unscaled attention near one-hot, so its bf16 and fp32 outputs differ by O(1)
#   after 24 layers, and the DiT's cross-attention (ungated, gain ~1.4 per linear) adds that to x.
#   T5's own init (embeddings ~1, q (d_model*d_kv)^-0.5 so logits ~N(0,1), k/v/wi d_model^-0.5,
#   o (heads*d_kv)^-0.5, wo d_ff^-0.5) keeps the 24-layer bf16/fp64 difference at ~2% (0.5% with 2
#   layers; the emulation: 84% with the normal init). The normal-init DiT fed that text error in the
#   emulation gave latents rel-L2 0.40, as diffusers did on the real checkpoint.
# - DiT: every linear and the patch embedding std 1/sqrt(fan_in) (variance preserving: a
#   normalized input of RMS ~1 gives outputs of RMS ~1), so x starts at RMS ~1 from the N(0,1)
#   latents. The modulation is time_proj(SiLU(temb)) + scale_shift_table: temb has RMS ~0.4,
#   SiLU(temb) ~0.22, so gates, shifts and scales come out with RMS ~0.22 (the table, randn/sqrt(dim)
#   as Wan, adds 0.014). The FFN's update is then gate x RMS 0.65 (GELU) ~ 0.15 of x, the
#   self-attention's ~0.06 (softmax over random tokens is diffuse: logits ~N(0,1) after the q/k
#   RMSNorm spread each query over ~N/e keys) and the cross-attention's ~0.05; x grows from RMS 1
#   to ~1.6 over 40 blocks. A block's Jacobian is then ~its update fraction (~0.15), and a random
#   perturbation grows by ~prod sqrt(1 + 0.15^2) ~ 1.5 over 40 blocks, not exponentially.
#   --gain scales the residual branches' output projections (attn1.to_out.0, attn2.to_out.0,
#   ffn.net.2), so every block's update scales with it: 1.0 (the default, plain fan-in) keeps the
#   updates at the fractions above; at 4x (updates ~0.6 of x) the emulation was still not chaotic.
# - The head (proj_out) is not made small: with std 1/sqrt(dim) the velocity has RMS ~1.1, as a
#   trained flow model's (noise - x0, RMS ~1.4). A small head would leave the latents after a step
#   ~ the initial noise and hide every error of the DiT in the latents' rel-L2.
# - What is left is bf16's own floor: diffusers keeps the residual stream in bf16 and rounds it at
#   each of the 120 residual adds (~0.17% RMS each, independent): ~1.8% on x, ~1.7% on the velocity,
#   ~1.3% on the latents after one step (velocity and noise are independent). The emulation gave
#   latents rel-L2 1.1-1.3% for --gain 0.1 to 4, insensitive to the gain. FP8 GEMMs there (e4m3,
#   per-tensor scales) moved the latents by ~4% against bf16 at gain 1 and ~2.5% at 0.5: their
#   error rides on the updates, so it scales with the gain (a smaller gain hides fp8 error).
# - VAE: convs N(0, 1/(c_in*k^3)) (1/(c_in*k^2) for the 2-D ones), biases small, gammas 1: each
#   residual block adds ~0.6 to a stream of RMS ~3 (the denormalized latents); the output has RMS
#   ~0.6 before the clamp to [-1, 1].
BIAS_STD = 0.01
RESIDUAL_OUT = ("attn1.to_out.0.weight", "attn2.to_out.0.weight", "ffn.net.2.weight")


def trained_like_std(comp, name, shape, cfg, gain):
    """The std of one tensor under --init trained-like (norm weights come from fill_value)."""
    fan_in = math.prod(shape[1:]) if len(shape) > 1 else None
    if comp == "text_encoder":
        d, kv, h, ff = cfg["d_model"], cfg["d_kv"], cfg["num_heads"], cfg["d_ff"]
        if name == "shared.weight":
            return 1.0
        if name.endswith("relative_attention_bias.weight"):
            return d ** -0.5
        for suffix, std in ((".q.weight", (d * kv) ** -0.5), (".k.weight", d ** -0.5), (".v.weight", d ** -0.5),
                            (".o.weight", (h * kv) ** -0.5), (".wi_0.weight", d ** -0.5),
                            (".wi_1.weight", d ** -0.5), (".wo.weight", ff ** -0.5)):
            if name.endswith(suffix):
                return std
        raise KeyError(f"trained-like init: no rule for {comp} tensor {name}")
    if name.endswith(".bias"):
        return BIAS_STD
    if name.endswith("scale_shift_table"):
        return shape[-1] ** -0.5
    if fan_in is None:
        raise KeyError(f"trained-like init: no rule for {comp} tensor {name} {shape}")
    return (gain if comp.startswith("transformer") and name.endswith(RESIDUAL_OUT) else 1.0) / math.sqrt(fan_in)


def value_spec(init, comp, name, shape, cfg, std, gain):
    """("const", v) or ("normal", std) for one tensor."""
    const = fill_value(name)
    if const is not None:
        return ("const", const)
    if init == "normal":
        return ("normal", std)
    return ("normal", trained_like_std(comp, name, shape, cfg, gain))


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


def read_json(path):
    with open(path) as f:
        return json.load(f)


def selftest(src):
    ok = True
    for comp, fname, _, rule, _ in COMPONENTS:
        d, got = os.path.join(src, comp), {}
        for fn in [fn for fn in sorted(os.listdir(d)) if fn.endswith(".safetensors")]:
            with open(os.path.join(d, fn), "rb") as f:
                h = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
            got.update({k: v["shape"] for k, v in h.items() if k != "__metadata__"})
        mine = dict(rule(read_json(os.path.join(d, fname))))
        ok &= mine == got
        print(f"selftest {comp}: {len(mine)} derived, {len(got)} in {d}: {'OK' if mine == got else 'MISMATCH'}")
        for k in sorted(k for k in set(mine) | set(got) if mine.get(k) != got.get(k)):
            print(f"  {k}: derived {mine.get(k)} fixture {got.get(k)}")
    # --init trained-like has a rule for every tensor, of the fixture's sizes and of the real ones
    for comp, fname, _, rule, cfg_over in COMPONENTS:
        for label, cfg in (("fixture", read_json(os.path.join(src, comp, fname))),
                           ("14B", {**read_json(os.path.join(src, comp, fname)), **cfg_over})):
            try:
                specs = {n: value_spec("trained-like", comp, n, sh, cfg, None, 0.5) for n, sh in rule(cfg)}
                bad = [n for n, (k, v) in specs.items() if not (v >= 0 and math.isfinite(v))]
            except KeyError as e:
                specs, bad = {}, [str(e)]
            ok &= not bad
            print(f"selftest trained-like {comp} ({label}): {len(specs)} tensors: {'OK' if not bad else bad[:3]}")
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
            ("vae", "decoder.conv_in.weight", [384, 16, 3, 3, 3], {}, (16 * 27) ** -0.5)]
    for comp, n, sh, c, std in want:
        got = value_spec("trained-like", comp, n, sh, c, None, 0.5)
        good = got == ("const", 1.0) if std is None else (got[0] == "normal" and abs(got[1] - std) < 1e-12 * std)
        ok &= good
        if not good:
            print(f"selftest trained-like {comp} {n}: {got}, expected std {std}: MISMATCH")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="output pipeline directory (required unless --selftest)")
    ap.add_argument("--layers", type=int, default=40, help="transformer blocks (default 40)")
    ap.add_argument("--text-layers", type=int, default=24, help="UMT5 layers (default 24)")
    ap.add_argument("--heads", type=int, default=40,
                    help="DiT attention heads (default 40: the 14B's 5120 channels); head dim stays 128 and "
                         "ffn_dim scales along (round(13824 * heads / 40)). Fewer heads make a narrow model of the "
                         "same depth and init, e.g. for CPU runs of the fp8 emulation")
    ap.add_argument("--text-d-model", type=int, default=4096,
                    help="UMT5 d_model (default 4096), and the DiT's text_dim with it: num_heads d_model/64, "
                         "d_ff 2.5 * d_model; a multiple of 64")
    ap.add_argument("--experts", type=int, choices=(1, 2), default=1,
                    help="2: a Wan2.2-A14B-shaped pipeline, a second expert transformer_2 of the same shapes "
                         "(other random values) and boundary_ratio 0.875 in model_index.json")
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
    ap.add_argument("--from", dest="src", default=os.path.join(REPO, "tests", "golden", "wan21-tiny"),
                    help="pipeline dir to copy tokenizer/, scheduler/, model_index.json and config keys from")
    ap.add_argument("--shard-gb", type=float, default=5.0, help="max shard size in GB (0: one file each)")
    ap.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1), help="writer processes")
    ap.add_argument("--dry-run", action="store_true", help="print the sizes, write nothing")
    ap.add_argument("--overwrite", action="store_true", help="replace the component folders in --out")
    ap.add_argument("--selftest", action="store_true", help="check the shape rules against --from's files")
    a = ap.parse_args()
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
    if a.heads < 1:
        ap.error("--heads must be at least 1")
    if a.text_d_model < 64 or a.text_d_model % 64:
        ap.error("--text-d-model must be a positive multiple of 64")
    if a.selftest:
        return 0 if selftest(a.src) else 1
    if not a.out:
        ap.error("--out is required")
    over = {"transformer": {"num_layers": a.layers, "num_attention_heads": a.heads,
                            "ffn_dim": round(DIT_CFG["ffn_dim"] * a.heads / DIT_CFG["num_attention_heads"]),
                            "text_dim": a.text_d_model},
            "text_encoder": {"num_layers": a.text_layers, "d_model": a.text_d_model, "num_heads": a.text_d_model // 64,
                             "d_ff": a.text_d_model * UMT5_CFG["d_ff"] // UMT5_CFG["d_model"]}}
    over["transformer_2"] = over["transformer"]
    components = COMPONENTS + ([("transformer_2",) + COMPONENTS[0][1:]] if a.experts == 2 else [])
    plans, total = [], 0
    for ci, (comp, fname, stem, rule, cfg_over) in enumerate(components):
        src_comp = "transformer" if comp == "transformer_2" else comp
        cfg = {**read_json(os.path.join(a.src, src_comp, fname)), **cfg_over, **over.get(comp, {})}
        tensors = [(n, s, [a.seed, ci, i], value_spec(a.init, comp, n, s, cfg, a.std, a.gain))
                   for i, (n, s) in enumerate(rule(cfg))]
        params = sum(math.prod(s) for _, s, _, _ in tensors)
        shards = plan_shards(tensors, int(a.shard_gb * 1e9))
        total += 2 * params
        print(f"{comp:13s} {len(tensors):5d} tensors {params:15,d} params {2 * params:17,d} bytes "
              f"({2 * params / 1e9:.2f} GB) in {len(shards)} file(s)")
        plans.append((comp, fname, stem, cfg, shards))
    print(f"{'total':13s} {total:45,d} bytes ({total / 1e9:.2f} GB)")
    print(f"init {a.init}: " + (f"std {a.std}" if a.init == "normal" else f"gain {a.gain}, biases std {BIAS_STD}"))
    if a.dry_run:
        return 0
    try:
        import numpy  # noqa: F401  (the writer needs it: fail before anything is written)
    except ImportError:
        sys.exit("numpy is needed to write the weights (pip install numpy)")
    os.makedirs(a.out, exist_ok=True)
    index_path = os.path.join(a.out, "model_index.json")
    if os.path.exists(index_path):  # written last: its presence marks a complete checkpoint
        if not a.overwrite:
            sys.exit(f"{index_path} exists (pass --overwrite to replace the checkpoint)")
        os.remove(index_path)
    init_path = os.path.join(a.out, "random_init.json")
    if os.path.exists(init_path):
        os.remove(init_path)
    for comp, *_ in plans:
        d = os.path.join(a.out, comp)
        if os.path.exists(d):
            if not a.overwrite:
                sys.exit(f"{d} exists (pass --overwrite to replace it)")
            shutil.rmtree(d)
    free = shutil.disk_usage(a.out).free
    if free < total * 1.02:
        sys.exit(f"not enough disk space in {a.out}: {free / 1e9:.1f} GB free, {total / 1e9:.1f} GB needed")
    for sub in ("tokenizer", "scheduler"):  # plain copies (the fixture's files are read-only)
        os.makedirs(os.path.join(a.out, sub), exist_ok=True)
        for fn in os.listdir(os.path.join(a.src, sub)):
            shutil.copyfile(os.path.join(a.src, sub, fn), os.path.join(a.out, sub, fn))
    jobs = []
    for comp, fname, stem, cfg, shards in plans:
        d = os.path.join(a.out, comp)
        os.makedirs(d)
        with open(os.path.join(d, fname), "w") as f:
            json.dump(cfg, f, indent=2, sort_keys=True)
            f.write("\n")
        n = len(shards)
        names = [f"{stem}.safetensors"] if n == 1 else [f"{stem}-{k + 1:05d}-of-{n:05d}.safetensors" for k in range(n)]
        if n > 1:
            index = {"metadata": {"total_size": sum(nbytes(t[1]) for sh in shards for t in sh)},
                     "weight_map": {t[0]: fn for fn, sh in zip(names, shards) for t in sh}}
            with open(os.path.join(d, f"{stem}.safetensors.index.json"), "w") as f:
                json.dump(index, f, indent=2)
        jobs += [(os.path.join(d, fn), sh) for fn, sh in zip(names, shards)]
    jobs.sort(key=lambda j: -sum(nbytes(t[1]) for t in j[1]))  # biggest first
    t0 = time.time()
    with Pool(max(1, min(a.jobs, len(jobs)))) as pool:
        written = sum(pool.imap_unordered(write_shard, jobs))
    dt = time.time() - t0
    with open(init_path, "w") as f:  # what fp8_accuracy.py records about the checkpoint
        json.dump({"init": a.init, "std": a.std, "gain": a.gain, "bias_std": BIAS_STD if a.init != "normal" else None,
                   "seed": a.seed, "layers": a.layers, "text_layers": a.text_layers, "experts": a.experts,
                   "heads": a.heads, "text_d_model": a.text_d_model,
                   "script": "scripts/bench/make_random_checkpoint.py"}, f, indent=2)
        f.write("\n")
    index = read_json(os.path.join(a.src, "model_index.json"))
    if a.experts == 2:  # Wan2.2-A14B: the low-noise expert and its switch point
        index["transformer_2"] = list(index["transformer"])
        index["boundary_ratio"] = 0.875
    with open(index_path, "w") as f:  # last: the checkpoint is complete
        json.dump(index, f, indent=2)
        f.write("\n")
    print(f"wrote {written:,d} bytes in {len(jobs)} file(s) to {a.out} in {dt:.1f} s "
          f"({written / dt / 1e6:.0f} MB/s, {written / 2 / dt / 1e6:.0f} M elements/s, {a.jobs} jobs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
