"""The published Wan checkpoints make_random_checkpoint.py imitates (--variant): official configs,
components and where each variant's configs come from."""
import json
import os

from wan_checkpoint_layout import clip_tensors, dit_tensors, umt5_tensors, vae_tensors

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = os.path.join(REPO, "recipes", "models")
I2V_FIXTURES = os.path.join(REPO, "tests", "golden-i2v")

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


# component folder, config file, weight file stem, tensor rule, config overrides (t2v: over --from's configs)
COMPONENTS = [("transformer", "config.json", "diffusion_pytorch_model", dit_tensors, DIT_CFG),
              ("text_encoder", "config.json", "model", umt5_tensors, UMT5_CFG),
              ("vae", "config.json", "diffusion_pytorch_model", vae_tensors, VAE_CFG)]
EXPERT_2 = ("transformer_2",) + COMPONENTS[0][1:]
IMAGE_ENCODER = ("image_encoder", "config.json", "model", clip_tensors, {})

# --variant: the tiny fixture of the same layout (the default --from: tokenizer/, and what --selftest
# checks the rules against) and the config-only copy of the real checkpoint in recipes/models (its
# model_index.json, scheduler/, image_processor/ and every component's config, sizes as published;
# None: t2v, the official values above over --from's configs). Wan2.1-I2V-14B-480P and -720P share
# every config.
VARIANTS = {"t2v": (os.path.join(REPO, "tests", "golden", "wan21-tiny"), None),
            "i2v-14b": (os.path.join(I2V_FIXTURES, "wan21-i2v-tiny"), "wan2.1-i2v-14b-720p"),
            "flf2v-14b": (os.path.join(I2V_FIXTURES, "wan21-flf2v-tiny"), "wan2.1-flf2v-14b-720p"),
            "i2v-a14b": (os.path.join(I2V_FIXTURES, "wan22-i2v-tiny"), "wan2.2-i2v-a14b"),
            "ti2v-5b": (os.path.join(I2V_FIXTURES, "wan22-ti2v-tiny"), "wan2.2-ti2v-5b")}

# Parameters of each component at the real sizes, as diffusers 0.42.1 / transformers 5.17 build the
# recipes/models configs (on the meta device; the text encoder at its 24 layers): the dry runs of
# --selftest must give them.
REAL_PARAMS = {"t2v": dict(transformer=14_288_491_584, vae=126_892_531),
               "i2v-14b": dict(transformer=16_394_878_784, vae=126_892_531, image_encoder=632_076_800),
               "flf2v-14b": dict(transformer=16_395_536_704, vae=126_892_531, image_encoder=632_076_800),
               "i2v-a14b": dict(transformer=14_288_901_184, transformer_2=14_288_901_184, vae=126_892_531),
               "ti2v-5b": dict(transformer=4_999_787_712, vae=704_688_668)}
TEXT_ENCODER_PARAMS = 5_680_910_336


def read_json(path):
    with open(path) as f:
        return json.load(f)


def real_dir(variant):
    return os.path.join(MODELS, VARIANTS[variant][1])


def named(index, comp):
    """Whether model_index.json names `comp` ([library, class], not [null, null])."""
    v = index.get(comp)
    return isinstance(v, list) and len(v) == 2 and v[0] is not None


def variant_components(variant, experts=1):
    """The components of a variant in seed order (t2v's first three first, so its seeds do not move)."""
    if VARIANTS[variant][1] is None:
        return COMPONENTS + ([EXPERT_2] if experts == 2 else [])
    index = read_json(os.path.join(real_dir(variant), "model_index.json"))
    return (COMPONENTS + ([EXPERT_2] if named(index, "transformer_2") else [])
            + ([IMAGE_ENCODER] if named(index, "image_encoder") else []))


def real_dit(variant):
    """The variant's transformer config at its published sizes."""
    if VARIANTS[variant][1] is None:
        return DIT_CFG
    return read_json(os.path.join(real_dir(variant), "transformer", "config.json"))
