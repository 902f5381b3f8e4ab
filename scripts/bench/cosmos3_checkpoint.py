"""The Cosmos 3 variants of make_random_checkpoint.py (--variant cosmos3-nano, cosmos3-super): a
Cosmos3OmniPipeline directory from the config-only copy in recipes/models/cosmos3-* (configs,
scheduler, model_index.json), random weights under the flat `layers.N.*` names diffusers'
Cosmos3OmniTransformer loads (models/transformers/transformer_cosmos3.py: every module the class
builds, lm_head and the sound and action heads included, so from_pretrained finds no missing key),
the Wan 2.2 VAE (wan_checkpoint_layout.vae_tensors) and text_tokenizer/ from the real-vocabulary Qwen
fixture (tests/tokenizer_bpe/qwen.tar.xz: Qwen's 151,643 BPE ranks, Qwen3-VL's added tokens and
chat_template.jinja, the template vgen recognises).

model_index.json is the recipes copy's with `sound_tokenizer` [null, null]: no audio tokenizer is
written (the pipeline's optional component; a video render without sound never calls it).
Sizes: --layers sets num_hidden_layers; --heads H narrows the model: H query heads, H / (heads / KV
heads) KV heads, hidden_size and intermediate_size scaled by H / heads (head_dim, the vocabulary
and the latent sizes stay).
"""
import json
import lzma
import math
import os
import shutil
import tarfile

from wan_checkpoint_layout import vae_tensors

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = os.path.join(REPO, "recipes", "models")
QWEN_TOKENIZER = os.path.join(REPO, "tests", "tokenizer_bpe", "qwen.tar.xz")
FIXTURES = os.path.join(REPO, "tests", "golden-cosmos3")

# --variant -> its config-only copy in recipes/models
VARIANTS = {"cosmos3-nano": "cosmos3-nano", "cosmos3-super": "cosmos3-super"}

# Parameters at the published sizes as diffusers 0.42.1 builds the recipes/models configs (meta
# device): the transformer with lm_head and the sound and action heads, the Wan 2.2 VAE.
REAL_PARAMS = {"cosmos3-nano": dict(transformer=15_173_669_120, vae=704_688_668),
               "cosmos3-super": dict(transformer=64_019_736_832, vae=704_688_668)}


def real_dir(variant):
    return os.path.join(MODELS, VARIANTS[variant])


def read_json(path):
    with open(path) as f:
        return json.load(f)


def transformer_tensors(c):
    """Cosmos3OmniTransformer's state dict: (name, shape) in module order."""
    D, F, Dh = c["hidden_size"], c["intermediate_size"], c.get("head_dim", 128)
    QD, KD = c["num_attention_heads"] * Dh, c["num_key_value_heads"] * Dh
    bias, silu = bool(c.get("attention_bias")), c.get("hidden_act", "silu") == "silu"
    qk_text = c.get("qk_norm_for_text", True)
    lin = lambda n, o, i, b: [(n + ".weight", [o, i])] + ([(n + ".bias", [o])] if b else [])
    t = [("embed_tokens.weight", [c["vocab_size"], D])]
    for i in range(c["num_hidden_layers"]):
        a = f"layers.{i}.self_attn."
        t += lin(a + "to_q", QD, D, bias) + lin(a + "to_k", KD, D, bias) + lin(a + "to_v", KD, D, bias)
        t += lin(a + "to_out", D, QD, bias)
        if qk_text:
            t += [(a + "norm_q.weight", [Dh]), (a + "norm_k.weight", [Dh])]
        elif c.get("use_und_k_norm_for_gen"):
            t += [(a + "k_norm_und_for_gen.weight", [Dh])]
        t += lin(a + "add_q_proj", QD, D, bias) + lin(a + "add_k_proj", KD, D, bias)
        t += lin(a + "add_v_proj", KD, D, bias) + lin(a + "to_add_out", D, QD, bias)
        t += [(a + "norm_added_q.weight", [Dh]), (a + "norm_added_k.weight", [Dh])]
        for m in ("mlp", "mlp_moe_gen"):
            p = f"layers.{i}.{m}."
            t += ([(p + "gate_proj.weight", [F, D])] if silu else []) + [(p + "up_proj.weight", [F, D])]
            t += [(p + "down_proj.weight", [D, F])]
        for n in ("input_layernorm", "input_layernorm_moe_gen", "post_attention_layernorm",
                  "post_attention_layernorm_moe_gen"):
            t += [(f"layers.{i}.{n}.weight", [D])]
    t += [("norm.weight", [D]), ("norm_moe_gen.weight", [D]), ("lm_head.weight", [c["vocab_size"], D])]
    P = c["patch_latent_dim"]
    t += lin("proj_in", D, P, True) + lin("proj_out", P, D, True)
    t += lin("time_embedder.linear_1", D, 256, True) + lin("time_embedder.linear_2", D, D, True)
    if c.get("action_gen"):  # DomainAwareLinear: one weight/bias per embodiment domain, as embeddings
        A, N = c["action_dim"], c.get("num_embodiment_domains", 32)
        t += [("action_proj_in.fc.weight", [N, D * A]), ("action_proj_in.bias.weight", [N, D]),
              ("action_proj_out.fc.weight", [N, A * D]), ("action_proj_out.bias.weight", [N, A]),
              ("action_modality_embed", [D])]
    if c.get("sound_gen"):
        S = c["sound_dim"]
        t += lin("audio_proj_in", D, S, True) + lin("audio_proj_out", S, D, True) + [("audio_modality_embed", [D])]
    return t


def value_spec(name, shape, std):
    """Norm weights 1.0 (RMSNorm and Nemotron RMSNorm scales), everything else N(0, std^2)."""
    last = name.rsplit(".", 2)[-2] if name.endswith(".weight") else ""
    if len(shape) == 1 and "norm" in last:
        return ("const", 1.0)
    return ("normal", std)


def size_overrides(real, layers, heads):
    """transformer/config.json keys for --layers and --heads (None: the published value)."""
    over = {}
    if layers is not None:
        over["num_hidden_layers"] = layers
    if heads is not None and heads != real["num_attention_heads"]:
        h0, kv0 = real["num_attention_heads"], real["num_key_value_heads"]
        group = h0 // kv0
        if heads % group or (real["hidden_size"] * heads) % h0 or (real["intermediate_size"] * heads) % h0:
            raise ValueError(f"--heads {heads}: must be a multiple of {group} (the query heads per KV head) that "
                             f"divides hidden_size {real['hidden_size']} and intermediate_size "
                             f"{real['intermediate_size']} in proportion to {h0} heads")
        over.update(num_attention_heads=heads, num_key_value_heads=heads // group,
                    hidden_size=real["hidden_size"] * heads // h0,
                    intermediate_size=real["intermediate_size"] * heads // h0)
    return over


def components(variant, layers=None, heads=None):
    """[(component, config file, weight stem, config, (name, shape) list)] at the sizes asked."""
    src = real_dir(variant)
    tc = read_json(os.path.join(src, "transformer", "config.json"))
    tc.update(size_overrides(tc, layers, heads))
    vc = read_json(os.path.join(src, "vae", "config.json"))
    return [("transformer", "config.json", "diffusion_pytorch_model", tc, transformer_tensors(tc)),
            ("vae", "config.json", "diffusion_pytorch_model", vc, vae_tensors(vc))]


def write_extras(variant, out):
    """scheduler/ (the recipes copy's) and text_tokenizer/ (the Qwen fixture, unpacked)."""
    sched = os.path.join(out, "scheduler")
    os.makedirs(sched, exist_ok=True)
    shutil.copyfile(os.path.join(real_dir(variant), "scheduler", "scheduler_config.json"),
                    os.path.join(sched, "scheduler_config.json"))
    tok = os.path.join(out, "text_tokenizer")
    if os.path.exists(tok):
        shutil.rmtree(tok)
    os.makedirs(tok)
    with lzma.open(QWEN_TOKENIZER) as xz, tarfile.open(fileobj=xz) as tar:
        for m in tar.getmembers():
            if m.isfile() and m.name.startswith("qwen/") and "/" not in m.name[5:]:
                with tar.extractfile(m) as f, open(os.path.join(tok, m.name[5:]), "wb") as g:
                    shutil.copyfileobj(f, g)


def write_index(variant, index_path):
    """model_index.json, last: the recipes copy's without the audio tokenizer nobody wrote."""
    index = read_json(os.path.join(real_dir(variant), "model_index.json"))
    index["sound_tokenizer"] = [None, None]
    with open(index_path, "w") as f:
        json.dump(index, f, indent=2)
        f.write("\n")


def fixture_shapes(d):
    import struct
    got = {}
    for fn in sorted(x for x in os.listdir(d) if x.endswith(".safetensors")):
        with open(os.path.join(d, fn), "rb") as f:
            h = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
        got.update({k: v["shape"] for k, v in h.items() if k != "__metadata__"})
    return got


def selftest():
    """The rule on both tiny fixtures (Qwen3 and Edge style) gives exactly their names and shapes; the
    published sizes give diffusers' parameter counts; --heads narrows consistently."""
    ok = True
    for name in ("cosmos3-tiny", "cosmos3-edge-tiny"):
        d = os.path.join(FIXTURES, name, "transformer")
        got, mine = fixture_shapes(d), dict(transformer_tensors(read_json(os.path.join(d, "config.json"))))
        good = got == mine
        ok &= good
        print(f"selftest cosmos3 {name}: {len(mine)} derived, {len(got)} in the fixture: {'OK' if good else 'MISMATCH'}")
        for k in sorted(k for k in set(mine) | set(got) if mine.get(k) != got.get(k)):
            print(f"  {k}: derived {mine.get(k)} fixture {got.get(k)}")
    for variant in VARIANTS:
        got = {c: sum(math.prod(s) for _, s in t) for c, _, _, _, t in components(variant)}
        good = got == REAL_PARAMS[variant]
        ok &= good
        print(f"selftest {variant} (real sizes): {'OK' if good else f'MISMATCH {got} != {REAL_PARAMS[variant]}'}")
        real = read_json(os.path.join(real_dir(variant), "transformer", "config.json"))
        group = real["num_attention_heads"] // real["num_key_value_heads"]
        cfg = components(variant, layers=2, heads=group)[0][3]
        good = (cfg["num_hidden_layers"] == 2 and cfg["num_key_value_heads"] == 1
                and cfg["hidden_size"] * real["num_attention_heads"] == real["hidden_size"] * group)
        ok &= good
        print(f"selftest {variant} --layers 2 --heads {group}: {'OK' if good else f'MISMATCH {cfg}'}")
    return ok
