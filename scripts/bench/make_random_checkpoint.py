#!/usr/bin/env python3
"""Random-weight Wan2.1-T2V-14B checkpoint in the Diffusers layout, for timing runs only.

Writes a WanPipeline directory (model_index.json, transformer/, text_encoder/, vae/, tokenizer/,
scheduler/) with the tensor names and shapes of Wan2.1-T2V-14B (WanTransformer3DModel, 40 layers,
dim 5120 = 40 heads x 128, ffn 13824), UMT5-XXL (UMT5EncoderModel, d_model 4096, 24 layers,
vocab 256384) and the Wan 2.1 VAE (AutoencoderKLWan, base_dim 96), every tensor in BF16, so that a
GPU machine without internet can run `vgen run` end to end at real size (720x1280x81, 40 steps)
and time it. BENCHMARKS ONLY: the weights are random, the videos are noise.

  python3 scripts/bench/make_random_checkpoint.py --out /tmp/wan14b-random            # ~40 GB
  python3 scripts/bench/make_random_checkpoint.py --out D --layers 1 --text-layers 1  # ~3.9 GB
  python3 scripts/bench/make_random_checkpoint.py --out D --dry-run    # sizes only, writes nothing
  python3 scripts/bench/make_random_checkpoint.py --selftest   # names/shapes rule == tiny fixture
  vgen run --recipe recipes/1gpu-14b.yaml --set model=/tmp/wan14b-random

Sizes (bf16): transformer 14,288,491,584 params = 28.6 GB, text encoder 5,680,910,336 = 11.4 GB,
VAE 126,892,531 = 0.25 GB (encoder included; vgen reads only the decoder). Needs numpy only.
On a GPU machine without network access generate it there (it is too big to copy): 40.2 GB of
the 64 GiB disk of a one-H200 machine; the writer is disk-bound (~0.4-0.6 GB/s with 2 jobs here).

Names/shapes follow vgen's loaders (lib/model/wan/transformer_weights.cpp, umt5.cpp, vae_decoder.cpp,
vae_layers.cpp) and diffusers' VAE encoder layout; `--selftest` applies the same rules to the tiny
fixture's configs and checks they give exactly its safetensors names and shapes. Files: shards of at
most --shard-gb (default 5; 0 = one file) named as save_pretrained does (<stem>-0000k-of-0000n
.safetensors + <stem>.safetensors.index.json; one shard: <stem>.safetensors; stem
diffusion_pytorch_model or model), both read by vgen's WeightStore; written by --jobs processes in
64M-element chunks. The disk must hold the total (checked before writing).

Values: matrices, conv kernels, embeddings, scale_shift_tables, relative attention biases and the
biases are i.i.d. N(0, std^2) (std = --std, 0.02; small random biases rather than 0 so no epilogue is
trivial); RMSNorm/LayerNorm/VAE gamma weights 1.0, LayerNorm biases 0. Finite over 40 layers: each
DiT sublayer reads a normalized input (q/k RMSNorm keeps logits ~N(0,1)) and adds ~std*sqrt(fan_in)
~1.4 (x a gate ~0.1-0.3), a random walk of a few units after 40 blocks. UMT5 attention is unscaled,
so logits are ~10 (near one-hot softmax, finite); its residual reaches ~10 after 24 layers. The VAE
RMS-normalizes before each 3x3x3 conv and clamps its output. Generator: per tensor, a table of 65536
bf16 values (std*N(0,1), round to nearest even) indexed by raw PCG64 bits: i.i.d. draws from a
65536-point normal sample, ~300M elements/s per process (float32 normal + rounding: ~45M/s);
deterministic for a --seed (block i's weights do not depend on --layers).

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
    # Decoder, exactly as lib/model/wan/vae_decoder.cpp loads it.
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


def to_bf16_bits(x):
    import numpy as np  # only the writer needs numpy (--selftest and --dry-run run without it)
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)  # round to nearest even


def write_tensor(f, name, shape, seed, std):
    import numpy as np
    n = math.prod(shape)
    const = fill_value(name)
    if const is not None:
        f.write(np.full(n, to_bf16_bits(np.float32(const)), dtype=np.uint16).tobytes())
        return
    rng = np.random.default_rng(seed)
    table = to_bf16_bits(np.float32(std) * rng.standard_normal(65536, dtype=np.float32))
    for off in range(0, n, CHUNK):
        m = min(CHUNK, n - off)
        idx = rng.bit_generator.random_raw((m + 3) // 4).view(np.uint16)[:m]
        f.write(memoryview(table[idx]))


def nbytes(shape):
    return 2 * math.prod(shape)


def write_shard(job):
    path, tensors, std = job
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, shape, _ in tensors:
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + nbytes(shape)]}
        off += nbytes(shape)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-(len(h) + 8) % 8)  # data section starts 8-byte aligned
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h)
        for name, shape, seed in tensors:
            write_tensor(f, name, shape, seed, std)
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
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="output pipeline directory (required unless --selftest)")
    ap.add_argument("--layers", type=int, default=40, help="transformer blocks (default 40)")
    ap.add_argument("--text-layers", type=int, default=24, help="UMT5 layers (default 24)")
    ap.add_argument("--experts", type=int, choices=(1, 2), default=1,
                    help="2: a Wan2.2-A14B-shaped pipeline, a second expert transformer_2 of the same shapes "
                         "(other random values) and boundary_ratio 0.875 in model_index.json")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--std", type=float, default=0.02, help="std of the random tensors (default 0.02)")
    ap.add_argument("--from", dest="src", default=os.path.join(REPO, "tests", "golden", "wan21-tiny"),
                    help="pipeline dir to copy tokenizer/, scheduler/, model_index.json and config keys from")
    ap.add_argument("--shard-gb", type=float, default=5.0, help="max shard size in GB (0: one file each)")
    ap.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1), help="writer processes")
    ap.add_argument("--dry-run", action="store_true", help="print the sizes, write nothing")
    ap.add_argument("--overwrite", action="store_true", help="replace the component folders in --out")
    ap.add_argument("--selftest", action="store_true", help="check the shape rules against --from's files")
    a = ap.parse_args()
    if a.selftest:
        return 0 if selftest(a.src) else 1
    if not a.out:
        ap.error("--out is required")
    over = {"transformer": {"num_layers": a.layers}, "text_encoder": {"num_layers": a.text_layers}}
    over["transformer_2"] = over["transformer"]
    components = COMPONENTS + ([("transformer_2",) + COMPONENTS[0][1:]] if a.experts == 2 else [])
    plans, total = [], 0
    for ci, (comp, fname, stem, rule, cfg_over) in enumerate(components):
        src_comp = "transformer" if comp == "transformer_2" else comp
        cfg = {**read_json(os.path.join(a.src, src_comp, fname)), **cfg_over, **over.get(comp, {})}
        tensors = [(n, s, [a.seed, ci, i]) for i, (n, s) in enumerate(rule(cfg))]
        params = sum(math.prod(s) for _, s, _ in tensors)
        shards = plan_shards(tensors, int(a.shard_gb * 1e9))
        total += 2 * params
        print(f"{comp:13s} {len(tensors):5d} tensors {params:15,d} params {2 * params:17,d} bytes "
              f"({2 * params / 1e9:.2f} GB) in {len(shards)} file(s)")
        plans.append((comp, fname, stem, cfg, shards))
    print(f"{'total':13s} {total:45,d} bytes ({total / 1e9:.2f} GB)")
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
            index = {"metadata": {"total_size": sum(nbytes(s) for sh in shards for _, s, _ in sh)},
                     "weight_map": {t[0]: fn for fn, sh in zip(names, shards) for t in sh}}
            with open(os.path.join(d, f"{stem}.safetensors.index.json"), "w") as f:
                json.dump(index, f, indent=2)
        jobs += [(os.path.join(d, fn), sh, a.std) for fn, sh in zip(names, shards)]
    jobs.sort(key=lambda j: -sum(nbytes(t[1]) for t in j[1]))  # biggest first
    t0 = time.time()
    with Pool(max(1, min(a.jobs, len(jobs)))) as pool:
        written = sum(pool.imap_unordered(write_shard, jobs))
    dt = time.time() - t0
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
