"""Tensor names, shapes and initial values of the Diffusers Wan checkpoints, for make_random_checkpoint.py.

Each rule maps a component's config.json (as the official checkpoints and the tiny fixtures hold it)
to the (name, shape) list of its safetensors files: WanTransformer3DModel (the image path of Wan 2.1
I2V / FLF2V included), UMT5EncoderModel, AutoencoderKLWan (Wan 2.1, and the residual Wan 2.2 VAE of
TI2V-5B) and the CLIP vision tower of the Wan 2.1 image-to-video checkpoints. make_random_checkpoint.py
--selftest checks every rule against the fixtures' files. value_spec says how each tensor is filled.
"""
import math


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
        if c.get("added_kv_proj_dim"):  # the image tokens' keys and values of the cross-attention
            t += lin(b + "attn2.add_k_proj", D, c["added_kv_proj_dim"])
            t += lin(b + "attn2.add_v_proj", D, c["added_kv_proj_dim"])
            t += [(b + "attn2.norm_added_k.weight", [D])]
    if c.get("image_dim"):  # the CLIP tokens' embedder (LayerNorm, GELU MLP of width image_dim, LayerNorm)
        I, e = c["image_dim"], "condition_embedder.image_embedder."
        t += [(e + "norm1.weight", [I]), (e + "norm1.bias", [I])]
        t += lin(e + "ff.net.0.proj", I, I) + lin(e + "ff.net.2", D, I)
        t += [(e + "norm2.weight", [D]), (e + "norm2.bias", [D])]
        if c.get("pos_embed_seq_len"):  # FLF2V: a position embedding over both images' tokens
            t += [(e + "pos_embed", [1, c["pos_embed_seq_len"], I])]
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


def _conv(n, o, i, k):
    return [(n + ".weight", [o, i] + k), (n + ".bias", [o])]


K3, K1 = [3, 3, 3], [1, 1, 1]


def _res(n, i, o):
    """WanResidualBlock: RMS norms (gamma), two 3x3x3 convs, a 1x1x1 shortcut when the width changes."""
    t = [(n + ".norm1.gamma", [i, 1, 1, 1])] + _conv(n + ".conv1", o, i, K3)
    t += [(n + ".norm2.gamma", [o, 1, 1, 1])] + _conv(n + ".conv2", o, o, K3)
    return t + (_conv(n + ".conv_shortcut", o, i, K1) if i != o else [])


def _mid(n, d):
    t = _res(n + ".resnets.0", d, d) + [(n + ".attentions.0.norm.gamma", [d, 1, 1])]
    t += _conv(n + ".attentions.0.to_qkv", 3 * d, d, [1, 1]) + _conv(n + ".attentions.0.proj", d, d, [1, 1])
    return t + _res(n + ".resnets.1", d, d)


def _vae_encoder(c):
    """diffusers WanEncoder3d: a flat down_blocks list (Wan 2.1) or one WanResidualDownBlock per level
    (is_residual, Wan 2.2: resnets + downsampler; its AvgDown3D shortcut has no weights)."""
    z, base, mult, nr = c["z_dim"], c["base_dim"], c["dim_mult"], c["num_res_blocks"]
    tdown, last = c["temperal_downsample"], len(mult) - 1
    dims = [base] + [base * m for m in mult]
    t, k = _conv("encoder.conv_in", dims[0], c.get("in_channels", 3), K3), 0  # absent: the class default
    for i in range(len(mult)):
        cin, cout = dims[i], dims[i + 1]
        if c.get("is_residual"):
            p = f"encoder.down_blocks.{i}"
            for r in range(nr):
                t += _res(f"{p}.resnets.{r}", cin, cout)
                cin = cout
            if i != last:
                t += _conv(f"{p}.downsampler.resample.1", cout, cout, [3, 3])
                if tdown[i]:
                    t += _conv(f"{p}.downsampler.time_conv", cout, cout, [3, 1, 1])
            continue
        for _ in range(nr):
            t += _res(f"encoder.down_blocks.{k}", cin, cout)
            cin, k = cout, k + 1
        if i != last:
            t += _conv(f"encoder.down_blocks.{k}.resample.1", cout, cout, [3, 3])
            if tdown[i]:
                t += _conv(f"encoder.down_blocks.{k}.time_conv", cout, cout, [3, 1, 1])
            k += 1
    t += _mid("encoder.mid_block", dims[-1]) + [("encoder.norm_out.gamma", [dims[-1], 1, 1, 1])]
    return t + _conv("encoder.conv_out", 2 * z, dims[-1], K3) + _conv("quant_conv", 2 * z, 2 * z, K1)


def _vae_decoder(c):
    """As lib/model/wan/vae/vae_decoder.cpp loads the Wan 2.1 decoder (up_blocks.i.upsamplers.0, the
    input width halved after each upsampler); is_residual (Wan 2.2): WanResidualUpBlock, whose
    upsampler keeps the width and whose DupUp3D shortcut has no weights."""
    z, mult, nr, res = c["z_dim"], c["dim_mult"], c["num_res_blocks"], bool(c.get("is_residual"))
    db = c.get("decoder_base_dim") or c["base_dim"]
    dd = [db * mult[-1]] + [db * m for m in reversed(mult)]
    tup = list(reversed(c["temperal_downsample"]))
    t = _conv("post_quant_conv", z, z, K1) + _conv("decoder.conv_in", dd[0], z, K3) + _mid("decoder.mid_block", dd[0])
    for i in range(len(mult)):
        cin, cout, p = (dd[i] // 2 if i > 0 and not res else dd[i]), dd[i + 1], f"decoder.up_blocks.{i}"
        for r in range(nr + 1):
            t += _res(f"{p}.resnets.{r}", cin, cout)
            cin = cout
        if i != len(mult) - 1:
            up = f"{p}.upsampler" if res else f"{p}.upsamplers.0"
            if tup[i]:
                t += _conv(f"{up}.time_conv", 2 * cout, cout, [3, 1, 1])
            t += _conv(f"{up}.resample.1", cout if res else cout // 2, cout, [3, 3])
    return t + [("decoder.norm_out.gamma", [dd[-1], 1, 1, 1])] + _conv("decoder.conv_out", c.get("out_channels", 3), dd[-1], K3)


def vae_tensors(c):
    """AutoencoderKLWan: the encoder (unused by vgen's text-to-video, kept for realism) and the decoder."""
    return _vae_encoder(c) + _vae_decoder(c)


def clip_tensors(c):
    """transformers CLIPVisionModel (names without a prefix, as transformers 5 saves it) or
    CLIPVisionModelWithProjection (under vision_model., plus visual_projection: the published Wan 2.1
    I2V / FLF2V image_encoder), after the config's `architectures`."""
    proj = "CLIPVisionModelWithProjection" in (c.get("architectures") or [])
    p = "vision_model." if proj else ""
    D, F, P, C = c["hidden_size"], c["intermediate_size"], c["patch_size"], c["num_channels"]
    lin = lambda n, o, i: [(n + ".weight", [o, i]), (n + ".bias", [o])]
    ln = lambda n, d: [(n + ".weight", [d]), (n + ".bias", [d])]
    t = [(p + "embeddings.class_embedding", [D]), (p + "embeddings.patch_embedding.weight", [D, C, P, P]),
         (p + "embeddings.position_embedding.weight", [(c["image_size"] // P) ** 2 + 1, D])]
    t += ln(p + "pre_layrnorm", D)
    for i in range(c["num_hidden_layers"]):
        b = f"{p}encoder.layers.{i}."
        t += ln(b + "layer_norm1", D)
        for x in ("q_proj", "k_proj", "v_proj", "out_proj"):
            t += lin(b + "self_attn." + x, D, D)
        t += ln(b + "layer_norm2", D) + lin(b + "mlp.fc1", F, D) + lin(b + "mlp.fc2", D, F)
    t += ln(p + "post_layernorm", D)
    return t + ([("visual_projection.weight", [c["projection_dim"], D])] if proj else [])


def fill_value(name):
    """1.0 for norm scales, 0.0 for LayerNorm biases, None for random."""
    if name.endswith(("norm_q.weight", "norm_k.weight", "layer_norm.weight", "norm2.weight", ".gamma")):
        return 1.0
    if name.endswith(("norm_added_k.weight", "image_embedder.norm1.weight", "layer_norm1.weight",
                      "pre_layrnorm.weight", "post_layernorm.weight")):  # the image path and CLIP
        return 1.0
    return 0.0 if name.endswith(("norm2.bias", "norm1.bias", "pre_layrnorm.bias", "post_layernorm.bias")) else None


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
    # Embeddings added to tokens (CLIP's class token, FLF2V's image position embedding [1, L, I]):
    # 1/sqrt(width), as the scale_shift_tables.
    if name.endswith(("embeddings.class_embedding", "image_embedder.pos_embed")):
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
