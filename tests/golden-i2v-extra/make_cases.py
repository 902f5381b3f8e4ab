"""Image-to-video pipeline cases at other shapes than ../golden-i2v's, made with diffusers on the CPU in
float32 on the tiny models of ../golden-i2v (read, not copied: each case's model_dir points there):
condition images of other sizes and aspect ratios than the video (so the VAE condition is resized
with Lanczos and CLIP's input cropped), FLF2V with first and last images of different sizes, Wan 2.2
I2V-A14B with a last frame, and TI2V at a square size with 13 frames.

  python3 tests/golden-i2v-extra/make_cases.py      (torch, diffusers 0.42.1, transformers, Pillow)
Writes cases/pipeline_*.{json,safetensors}, images/*.png and PROVENANCE.json.
"""
import json, os
import numpy as np
import torch
import diffusers
import transformers
from PIL import Image
from safetensors.torch import save_file
from diffusers import UniPCMultistepScheduler, WanImageToVideoPipeline
from diffusers.image_processor import VaeImageProcessor

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "golden-i2v")
torch.use_deterministic_algorithms(True)
g = torch.Generator().manual_seed(4800)
rng = np.random.RandomState(4801)
PROMPT, NEG, MAX_LEN = "A cat walks on the grass, realistic style.", "negative", 16


def make_image(name, h, w):
    """A smooth RGB picture with edges and noise (structure for the resize and the VAE), as PNG."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = np.stack([np.sin(xx / (3 + 4 * rng.rand()) + 6 * rng.rand()), np.cos(yy / (2 + 3 * rng.rand())),
                  np.sin((xx + yy) / (4 + 3 * rng.rand()))], -1)
    a = 127.5 + 100 * a + ((xx // 7 + yy // 5) % 2)[..., None] * 25 - 12
    a = np.clip(a + rng.randint(-10, 11, a.shape), 0, 255).astype(np.uint8)
    os.makedirs(os.path.join(HERE, "images"), exist_ok=True)
    Image.fromarray(a, "RGB").save(os.path.join(HERE, "images", name + ".png"))
    return "images/" + name + ".png"


def load(rel):
    return Image.open(os.path.join(HERE, rel)).convert("RGB")


def run(name, model_dir, q, image, last=None, extra=None):
    kw = {"image_encoder": None, "image_processor": None} if q.get("no_clip") else {}
    pipe = WanImageToVideoPipeline.from_pretrained(os.path.join(SRC, model_dir), **kw)
    pipe.scheduler = UniPCMultistepScheduler.from_config(pipe.scheduler.config, flow_shift=q["shift"])
    vsf = pipe.vae_scale_factor_spatial
    ch = pipe.vae.config.z_dim
    lat0 = torch.randn((1, ch, (q["frames"] - 1) // 4 + 1, q["h"] // vsf, q["w"] // vsf), generator=g)
    seen = []

    def cb(p, i, t, k):
        seen.append((float(t), k["latents"].clone()))
        return {}

    args = dict(prompt=PROMPT, negative_prompt=NEG, image=load(image), height=q["h"], width=q["w"],
                num_frames=q["frames"], num_inference_steps=q["steps"], guidance_scale=q["gs"], latents=lat0.clone(),
                output_type="pt", max_sequence_length=MAX_LEN, callback_on_step_end=cb,
                callback_on_step_end_tensor_inputs=["latents"])
    args.update(extra or {})
    tens = {"image_preprocessed": VaeImageProcessor(vae_scale_factor=vsf).preprocess(load(image), height=q["h"],
                                                                                         width=q["w"])}
    if last:
        args["last_image"] = load(last)
        tens["last_image_preprocessed"] = VaeImageProcessor(vae_scale_factor=vsf).preprocess(
            load(last), height=q["h"], width=q["w"])
    with torch.no_grad():
        frames = pipe(**args).frames
    tens.update({"initial_latents": lat0, "step_latents": torch.stack([s[1] for s in seen]),
                 "step_timesteps": torch.tensor([s[0] for s in seen]), "frames": frames})
    os.makedirs(os.path.join(HERE, "cases"), exist_ok=True)
    save_file({k: v.contiguous().float() for k, v in tens.items()}, os.path.join(HERE, "cases", name + ".safetensors"))
    params = {"model_dir": "../golden-i2v/" + model_dir, "prompt": PROMPT, "negative_prompt": NEG, "height": q["h"],
              "width": q["w"], "num_frames": q["frames"], "num_inference_steps": q["steps"],
              "guidance_scale": q["gs"], "max_sequence_length": MAX_LEN, "scheduler": "UniPCMultistepScheduler",
              "flow_shift": q["shift"], "pipeline_class": "WanImageToVideoPipeline", "image": image,
              "note": "as ../golden-i2v's pipeline cases, the condition image(s) of other sizes than the video"}
    if last:
        params["last_image"] = last
    params.update(extra or {})
    with open(os.path.join(HERE, "cases", name + ".json"), "w") as f:
        json.dump(params, f, indent=1)


# Wan 2.1 I2V: a 45 × 70 image for a 48 × 64 video (Lanczos to the video's size; CLIP crops its centre).
run("pipeline_i2v_wan21_resize", "wan21-i2v-tiny", dict(h=48, w=64, frames=5, steps=3, gs=5.0, shift=3.0),
    make_image("i2v_45x70", 45, 70))
# Wan 2.1 FLF2V: a wide first frame and a tall last frame, both resized to 32 × 48.
run("pipeline_flf2v_wan21_resize", "wan21-flf2v-tiny", dict(h=32, w=48, frames=9, steps=3, gs=5.0, shift=3.0),
    make_image("flf_40x60", 40, 60), last=make_image("flf_52x41", 52, 41))
# Wan 2.2 I2V-A14B (two experts, no CLIP) with a last frame, at 48 × 32.
run("pipeline_i2v_wan22_last", "wan22-i2v-tiny", dict(h=48, w=32, frames=9, steps=4, gs=4.0, shift=5.0, no_clip=True),
    make_image("a14b_first_40x30", 40, 30), last=make_image("a14b_last_48x32", 48, 32),
    extra={"guidance_scale_2": 3.0})
# Wan 2.2 TI2V: 13 frames at 64 × 64 from a 70 × 90 image.
run("pipeline_ti2v_i2v_square", "wan22-ti2v-tiny", dict(h=64, w=64, frames=13, steps=4, gs=5.0, shift=5.0, no_clip=True),
    make_image("ti2v_70x90", 70, 90))
with open(os.path.join(HERE, "PROVENANCE.json"), "w") as f:
    json.dump({"script": "make_cases.py", "torch": torch.__version__, "diffusers": diffusers.__version__,
               "transformers": transformers.__version__, "device": "cpu", "dtype": "float32"}, f, indent=1)
