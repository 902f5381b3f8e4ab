"""Golden dit_forward cases of the Wan DiT's image path (WanImageEmbedding, add_k_proj/add_v_proj,
norm_added_k, the FLF2V position embedding) made with diffusers on the CPU in float32, on the tiny
transformers of ../golden-i2v (read, not copied: model_dir points there). The I2V fixture set has
pipeline cases only; these isolate the transformer.

  python3 tests/golden-i2v-dit/make_cases.py      (torch, diffusers 0.42.1, safetensors)
Writes cases/dit_forward_{i2v,flf2v,i2v_mixed,i2v_short,flf2v_short}.*, the per-token timestep cases of Wan 2.2
TI2V cases/dit_forward_ti2v{,_pad}.* and PROVENANCE.json.
"""
import json, os, sys
import torch
import diffusers
from diffusers import WanTransformer3DModel
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
torch.use_deterministic_algorithms(True)
g = torch.Generator().manual_seed(4500)


def case(name, model_dir, image_batches, text_len=16, latent=(1, 36, 3, 8, 8), t=(700.0,), g=g):
    dit = WanTransformer3DModel.from_pretrained(os.path.join(HERE, "..", "golden-i2v", model_dir, "transformer")).eval()
    cfg = dit.config
    clip_tokens = 17  # the tiny CLIP's (32 / 8)^2 + 1
    tensors = {}
    with torch.no_grad():
        for suffix, B, ts in (("", 1, t), ("_b2", 2, (t[0], 123.0))):
            x = torch.randn((B,) + tuple(latent[1:]), generator=g)
            ctx = torch.randn((B, text_len, cfg.text_dim), generator=g)
            img = torch.randn((B * image_batches, clip_tokens, cfg.image_dim), generator=g)
            tt = torch.tensor(ts)
            y = dit(hidden_states=x, timestep=tt, encoder_hidden_states=ctx, encoder_hidden_states_image=img,
                    return_dict=False)[0]
            tensors.update({"hidden_states" + suffix: x, "timestep" + suffix: tt, "encoder_hidden_states" + suffix: ctx,
                            "encoder_hidden_states_image" + suffix: img, "output" + suffix: y})
    save_file({k: v.contiguous().float() for k, v in tensors.items()}, os.path.join(HERE, "cases", name + ".safetensors"))
    params = {"kind": "dit_forward", "model": "transformer", "model_dir": "../golden-i2v/" + model_dir,
              "text_length": text_len,
              "note": "one transformer forward with image tokens (encoder_hidden_states_image: CLIP penultimate "
                      "states, [B x images, 17, image_dim]; FLF2V: first and last image of each sample in turn)"}
    with open(os.path.join(HERE, "cases", name + ".json"), "w") as f:
        json.dump(params, f, indent=1)


os.makedirs(os.path.join(HERE, "cases"), exist_ok=True)
# diffusers splits the context [image ‖ text] assuming 512 text positions (WanAttnProcessor's
# image_context_length = L - 512 with Python slicing): the text lengths below take each branch.
case("dit_forward_i2v", "wan21-i2v-tiny", image_batches=1, text_len=512)      # the image tokens exactly
case("dit_forward_flf2v", "wan21-flf2v-tiny", image_batches=2, text_len=512)  # both images' 34 tokens
case("dit_forward_i2v_mixed", "wan21-i2v-tiny", image_batches=1, text_len=250)  # 2L - 512 = 22: 5 text tokens too
case("dit_forward_i2v_short", "wan21-i2v-tiny", image_batches=1, text_len=16)   # none (the pipeline fixtures' length)
# FLF2V at the pipeline fixtures' length: the 34 image tokens (with their position embedding) all on
# the text path. Its own generator: the cases above keep their bytes.
case("dit_forward_flf2v_short", "wan21-flf2v-tiny", image_batches=2, text_len=16, g=torch.Generator().manual_seed(4700))


def ti2v_case(name, latent, t=(700.0, 123.0), text_len=16):
    """Per-token timesteps [B, S] as WanPipeline's expand_timesteps builds them in image-to-video mode:
    the first latent frame's tokens at 0 (the clean image), the others at the sample's t."""
    gt = torch.Generator().manual_seed(4600)  # its own sequence: the cases above keep their bytes
    dit = WanTransformer3DModel.from_pretrained(os.path.join(HERE, "..", "golden-i2v", "wan22-ti2v-tiny",
                                                             "transformer")).eval()
    pt, ph, pw = dit.config.patch_size
    F, H, W = latent[2] // pt, latent[3] // ph, latent[4] // pw
    mask = torch.ones(F, H, W)
    mask[0] = 0.0  # the first latent frame's tokens
    tensors = {}
    with torch.no_grad():
        for suffix, ts in (("", t[:1]), ("_b2", t)):
            B = len(ts)
            x = torch.randn((B,) + tuple(latent[1:]), generator=gt)
            ctx = torch.randn((B, text_len, dit.config.text_dim), generator=gt)
            tt = torch.stack([mask.flatten() * v for v in ts])  # [B, S]
            y = dit(hidden_states=x, timestep=tt, encoder_hidden_states=ctx, return_dict=False)[0]
            tensors.update({"hidden_states" + suffix: x, "timestep" + suffix: tt, "encoder_hidden_states" + suffix: ctx,
                            "output" + suffix: y})
    save_file({k: v.contiguous().float() for k, v in tensors.items()}, os.path.join(HERE, "cases", name + ".safetensors"))
    params = {"kind": "dit_forward", "model": "transformer", "model_dir": "../golden-i2v/wan22-ti2v-tiny",
              "text_length": text_len, "tokens": F * H * W,
              "note": "one transformer forward with per-token timesteps [B, S] (Wan 2.2 TI2V, expand_timesteps): "
                      "the first latent frame's tokens at 0, the others at the sample's t"}
    with open(os.path.join(HERE, "cases", name + ".json"), "w") as f:
        json.dump(params, f, indent=1)


ti2v_case("dit_forward_ti2v", latent=(1, 48, 3, 8, 8))       # 3·4·4 = 48 tokens
ti2v_case("dit_forward_ti2v_pad", latent=(1, 48, 3, 6, 10))  # 3·3·5 = 45 tokens: the meshes of 2 and 4 pad
with open(os.path.join(HERE, "PROVENANCE.json"), "w") as f:
    json.dump({"script": "make_cases.py", "torch": torch.__version__, "diffusers": diffusers.__version__,
               "device": "cpu", "dtype": "float32"}, f, indent=1)
