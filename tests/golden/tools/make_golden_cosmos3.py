"""Golden fixtures for NVIDIA Cosmos 3 (diffusers Cosmos3OmniTransformer / Cosmos3OmniPipeline), tiny random weights.

Two checkpoints in the Diffusers layout: `cosmos3-tiny` (Qwen3-style: SwiGLU MLP, RMSNorm, Q/K norm on both towers;
the whole pipeline: transformer/, vae/ (tiny Wan 2.2 VAE, z 48), scheduler/, text_tokenizer/ (a small byte-level BPE
trained with `tokenizers`, Qwen's added tokens, the Qwen3-VL Instruct chat template)) and `cosmos3-edge-tiny` (Nemotron/Edge
style: relu² MLP, Nemotron RMSNorm, no text Q/K norm but a K norm of the understanding keys for the generation tower,
attention biases; transformer/ only).
Cases (fp32, CPU, deterministic): mRoPE position ids and cos/sin tables, the understanding tower's per-layer K/V,
one transformer forward with cond and uncond prompts of different lengths (T2V and with a clean first frame), a
T2V pipeline run and an I2V one (step latents, frames), and a T2V run with the pipeline's
use_native_flow_schedule (checkpoint `cosmos3-tiny-native`: cosmos3-tiny's components, linked, under a
model_index.json that sets it).
Usage: /work/pyref/bin/python make_golden_cosmos3.py OUTDIR   (writes OUTDIR/, e.g. tests/golden-cosmos3)
       /work/pyref/bin/python make_golden_cosmos3.py OUTDIR pipeline_t2v_native
           (that case alone, from the saved OUTDIR/cosmos3-tiny; nothing else is rewritten)
"""
import json, os, sys, shutil
import numpy as np
import torch
from PIL import Image
from safetensors.torch import save_file
from tokenizers import Tokenizer, Regex, models, pre_tokenizers, decoders, normalizers, trainers, AddedToken
from transformers import PreTrainedTokenizerFast, AutoTokenizer
from diffusers import AutoencoderKLWan, UniPCMultistepScheduler
from diffusers.models.transformers.transformer_cosmos3 import Cosmos3OmniTransformer
from diffusers.pipelines.cosmos.pipeline_cosmos3_omni import (Cosmos3OmniPipeline, get_3d_mrope_ids_text_tokens,
                                                              get_3d_mrope_ids_vae_tokens, _preprocess_conditioning_image)

torch.use_deterministic_algorithms(True)
torch.set_num_threads(2)
out = sys.argv[1]
ONLY = sys.argv[2] if len(sys.argv) > 2 else None
assert ONLY in (None, "pipeline_t2v_native"), f"only the case pipeline_t2v_native is made alone, not {ONLY}"
cases = os.path.join(out, "cases"); images = os.path.join(out, "images")
if ONLY is None:
    for sub in ("cases", "images", "cosmos3-tiny", "cosmos3-edge-tiny", "cosmos3-tiny-native",
                "text_tokenizer"):  # README.md stays
        shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
    os.makedirs(cases); os.makedirs(images)
g = torch.Generator().manual_seed(3000)

QWEN_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|"
              r"\s+(?!\S)|\s+")
# Qwen2/2.5/3-VL added tokens, in the order of the real vocabulary (151643...).
QWEN_ADDED = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
              "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>", "<|vision_end|>",
              "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>"]
QWEN_ADDED_PLAIN = ["<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
                    "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>"]
# The chat template of the Qwen3-VL Instruct tokenizers (the Cosmos 3 reasoner is a Qwen3-VL); not checked against a
# released Cosmos 3 text_tokenizer/.
QWEN3_VL_CHAT_TEMPLATE = (
    "{%- if tools %}\n    {{- '<|im_start|>system\\n' }}\n    {%- if messages[0].role == 'system' %}\n        {%- if messages[0].content is string %}\n            {{- messages[0].content }}\n        {%- else %}\n            {%- for content in messages[0].content %}\n                {%- if 'text' in content %}\n                    {{- content.text }}\n                {%- endif %}\n            {%- endfor %}\n        {%- endif %}\n        {{- '\\n\\n' }}\n    {%- endif %}\n    {{- \"# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>\" }}\n    {%- for tool in tools %}\n        {{- \"\\n\" }}\n        {{- tool | tojson }}\n    {%- endfor %}\n    {{- \"\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{\\\"name\\\": <function-name>, \\\"arguments\\\": <args-json-object>}\\n</tool_call><|im_end|>\\n\" }}\n{%- else %}\n    {%- if messages[0].role == 'system' %}\n        {{- '<|im_start|>system\\n' }}\n        {%- if messages[0].content is string %}\n            {{- messages[0].content }}\n        {%- else %}\n            {%- for content in messages[0].content %}\n                {%- if 'text' in content %}\n                    {{- content.text }}\n                {%- endif %}\n            {%- endfor %}\n        {%- endif %}\n        {{- '<|im_end|>\\n' }}\n    {%- endif %}\n{%- endif %}\n{%- set image_count = namespace(value=0) %}\n{%- set video_count = namespace(value=0) %}\n{%- for message in messages %}\n    {%- if message.role == \"user\" %}\n        {{- '<|im_start|>' + message.role + '\\n' }}\n        {%- if message.content is string %}\n            {{- message.content }}\n        {%- else %}\n            {%- for content in message.content %}\n                {%- if content.type == 'image' or 'image' in content or 'image_url' in content %}\n                    {%- set image_count.value = image_count.value + 1 %}\n                    {%- if add_vision_id %}Picture {{ image_count.value }}: {% endif -%}\n                    <|vision_start|><|image_pad|><|vision_end|>\n                {%- elif content.type == 'video' or 'video' in content %}\n                    {%- set video_count.value = video_count.value + 1 %}\n                    {%- if add_vision_id %}Video {{ video_count.value }}: {% endif -%}\n                    <|vision_start|><|video_pad|><|vision_end|>\n                {%- elif 'text' in content %}\n                    {{- content.text }}\n                {%- endif %}\n            {%- endfor %}\n        {%- endif %}\n        {{- '<|im_end|>\\n' }}\n    {%- elif message.role == \"assistant\" %}\n        {{- '<|im_start|>' + message.role + '\\n' }}\n        {%- if message.content is string %}\n            {{- message.content }}\n        {%- else %}\n            {%- for content_item in message.content %}\n                {%- if 'text' in content_item %}\n                    {{- content_item.text }}\n                {%- endif %}\n            {%- endfor %}\n        {%- endif %}\n        {%- if message.tool_calls %}\n            {%- for tool_call in message.tool_calls %}\n                {%- if (loop.first and message.content) or (not loop.first) %}\n                    {{- '\\n' }}\n                {%- endif %}\n                {%- if tool_call.function %}\n                    {%- set tool_call = tool_call.function %}\n                {%- endif %}\n                {{- '<tool_call>\\n{\"name\": \"' }}\n                {{- tool_call.name }}\n                {{- '\", \"arguments\": ' }}\n                {%- if tool_call.arguments is string %}\n                    {{- tool_call.arguments }}\n                {%- else %}\n                    {{- tool_call.arguments | tojson }}\n                {%- endif %}\n                {{- '}\\n</tool_call>' }}\n            {%- endfor %}\n        {%- endif %}\n        {{- '<|im_end|>\\n' }}\n    {%- elif message.role == \"tool\" %}\n        {%- if loop.first or (messages[loop.index0 - 1].role != \"tool\") %}\n            {{- '<|im_start|>user' }}\n        {%- endif %}\n        {{- '\\n<tool_response>\\n' }}\n        {%- if message.content is string %}\n            {{- message.content }}\n        {%- else %}\n            {%- for content in message.content %}\n                {%- if content.type == 'image' or 'image' in content or 'image_url' in content %}\n                    {%- set image_count.value = image_count.value + 1 %}\n                    {%- if add_vision_id %}Picture {{ image_count.value }}: {% endif -%}\n                    <|vision_start|><|image_pad|><|vision_end|>\n                {%- elif content.type == 'video' or 'video' in content %}\n                    {%- set video_count.value = video_count.value + 1 %}\n                    {%- if add_vision_id %}Video {{ video_count.value }}: {% endif -%}\n                    <|vision_start|><|video_pad|><|vision_end|>\n                {%- elif 'text' in content %}\n                    {{- content.text }}\n                {%- endif %}\n            {%- endfor %}\n        {%- endif %}\n        {{- '\\n</tool_response>' }}\n        {%- if loop.last or (messages[loop.index0 + 1].role != \"tool\") %}\n            {{- '<|im_end|>\\n' }}\n        {%- endif %}\n    {%- endif %}\n{%- endfor %}\n{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n{%- endif %}\n")

CORPUS = [
    "You are a helpful assistant who will generate videos from a give prompt.",
    "You are a helpful assistant who will generate images from a give prompt.",
    "A cat walks on the grass, realistic style. The video is 2.0 seconds long and is of 16 FPS.",
    "This video is of 32x48 resolution. This image is not of 64x64 resolution.",
    "The video is not 0.6 seconds long and is not of 16 FPS. A robot arm picks up a red cube from the table.",
    "Sunlight through leaves, slow camera pan over a river; waves, birds and people walking on a beach at dusk.",
    "blurry, low quality, distorted, watermark, text, jpeg artifacts, oversaturated, static, ugly.",
]


def make_tokenizer(d):
    """Byte-level BPE trained on CORPUS with Qwen2's split regex and Qwen's added tokens; saved as text_tokenizer/."""
    tok = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=420, min_frequency=1, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tok.train_from_iterator(CORPUS * 4, trainer=trainer)
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in QWEN_ADDED])
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in QWEN_ADDED_PLAIN])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
                                   unk_token=None, bos_token=None, clean_up_tokenization_spaces=False,
                                   model_max_length=262144)
    fast.chat_template = QWEN3_VL_CHAT_TEMPLATE
    tdir = os.path.join(d, "text_tokenizer")
    fast.save_pretrained(tdir)
    cfg_path = os.path.join(tdir, "tokenizer_config.json")
    cfg = json.load(open(cfg_path))
    cfg["tokenizer_class"] = "Qwen2Tokenizer"  # as the real checkpoints name it
    cfg["chat_template"] = QWEN3_VL_CHAT_TEMPLATE
    json.dump(cfg, open(cfg_path, "w"), indent=2, ensure_ascii=False)
    if os.path.exists(os.path.join(tdir, "chat_template.jinja")):
        os.remove(os.path.join(tdir, "chat_template.jinja"))
    return AutoTokenizer.from_pretrained(tdir)


def perturb_norms(m):
    with torch.no_grad():
        for n, p in m.named_parameters():
            if p.ndim == 1 and "norm" in n and n.endswith("weight"):
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))


def small_biases(m):
    with torch.no_grad():
        for n, p in m.named_parameters():
            if n.endswith(".bias") and "self_attn" in n:
                p.copy_(0.1 * torch.randn(p.shape, generator=g))


def save_case(name, tensors, params):
    save_file({k: v.detach().contiguous().float() if v.is_floating_point() else v.contiguous()
               for k, v in tensors.items()}, os.path.join(cases, name + ".safetensors"))
    with open(os.path.join(cases, name + ".json"), "w") as f:
        json.dump(params, f, indent=1)


TINY = dict(head_dim=32, hidden_size=64, intermediate_size=96, num_attention_heads=4, num_key_value_heads=2,
            num_hidden_layers=2, rope_axes_dim=[6, 5, 5], rope_theta=5000000.0, rms_norm_eps=1e-6, base_fps=24,
            enable_fps_modulation=True, latent_channel=48, latent_patch_size=2, patch_latent_dim=192,
            unified_3d_mrope_reset_spatial_ids=True, unified_3d_mrope_temporal_modality_margin=15000,
            timestep_scale=0.001)


def make_transformer(seed, vocab, **over):
    torch.manual_seed(seed)
    kw = dict(TINY, vocab_size=vocab, **over)
    m = Cosmos3OmniTransformer(**kw).eval()
    perturb_norms(m)
    small_biases(m)
    return m


def mrope_ids(L, grid, fps, cfg, tcf=4):
    """The pipeline's joint position ids: text [0, L) then the vision grid after the modality margin."""
    text_ids, nxt = get_3d_mrope_ids_text_tokens(L, 0, use_float_positions=cfg.enable_fps_modulation)
    vis_ids, _ = get_3d_mrope_ids_vae_tokens(grid[0], grid[1], grid[2],
                                             nxt + cfg.unified_3d_mrope_temporal_modality_margin,
                                             reset_spatial_indices=cfg.unified_3d_mrope_reset_spatial_ids,
                                             fps=fps if cfg.enable_fps_modulation else None,
                                             base_fps=float(cfg.base_fps), temporal_compression_factor=tcf)
    return torch.cat([text_ids, vis_ids], dim=1)


def capture_layers(model):
    """Records, per layer, the understanding keys the generation tower attends to (norm + RoPE) and the values."""
    rec = []
    import diffusers.models.transformers.transformer_cosmos3 as tc
    orig = tc.dispatch_attention_fn

    def spy(q, k, v, is_causal=False, **kw):
        if not is_causal:
            rec.append((k, v))
        return orig(q, k, v, is_causal=is_causal, **kw)
    tc.dispatch_attention_fn = spy
    return rec, lambda: setattr(tc, "dispatch_attention_fn", orig)


def forward_inputs(model, ids, latents, t, noisy, fps):
    cfg = model.config
    T, H, W = latents.shape[2:]
    p = cfg.latent_patch_size
    hp, wp = (H + p - 1) // p, (W + p - 1) // p
    L = len(ids)
    nv = T * hp * wp
    mse = [L + f * hp * wp + j for f in noisy for j in range(hp * wp)]
    return dict(input_ids=torch.tensor(ids), text_indexes=torch.arange(L), position_ids=mrope_ids(L, (T, hp, wp), fps, cfg),
                und_len=L, sequence_length=L + nv, vision_tokens=[latents], vision_token_shapes=[(T, hp, wp)],
                vision_sequence_indexes=torch.arange(L, L + nv), vision_mse_loss_indexes=torch.tensor(mse, dtype=torch.long),
                vision_timesteps=torch.full((len(noisy) * hp * wp,), float(t)),
                vision_noisy_frame_indexes=[torch.tensor(noisy, dtype=torch.long)], return_dict=False)


def model_cases(model, model_dir, tag, vocab, ids_cond, ids_uncond):
    cfg = model.config
    # (a) mRoPE ids and tables: fps 16 against base 24 (scaled time axis) and one frame (integer positions).
    for name, L, grid, fps in (("mrope_video", 7, (3, 2, 3), 16.0), ("mrope_image", 5, (1, 3, 2), 16.0)):
        pos = mrope_ids(L, grid, fps, cfg)
        cos, sin = model.rotary_emb(position_ids=pos.unsqueeze(1), device="cpu", dtype=torch.float32)
        save_case(f"{name}{tag}", {"position_ids": pos.float(), "cos": cos.squeeze(0), "sin": sin.squeeze(0),
                                   "inv_freq": model.rotary_emb.inv_freq},
                  {"model_dir": model_dir, "model": "transformer", "prompt_len": L, "grid": list(grid), "fps": fps,
                   "temporal_compression": 4,
                   "note": "position_ids [3, L + T*Hp*Wp] (text 0..L-1 on all axes, then the vision grid at "
                           "L + margin with the time axis scaled by base_fps/fps when T > 1); cos, sin "
                           "[N, head_dim] after the interleaved mRoPE layout"})
    # (b) the understanding tower's per-layer K (norm + RoPE, as the generation tower reads it) and V.
    lat = torch.randn((1, cfg.latent_channel, 2, 2, 2), generator=g)
    rec, undo = capture_layers(model)
    with torch.no_grad():
        model(**forward_inputs(model, ids_cond, lat, 500.0, [0, 1], 24.0))
    undo()
    L = len(ids_cond)
    kv = {}
    for i, (k, v) in enumerate(rec):
        kv[f"k_{i}"] = k[0, :L].clone()  # [L, KVH, Dh]
        kv[f"v_{i}"] = v[0, :L].clone()
    save_case(f"und_kv{tag}", dict(kv, input_ids=torch.tensor(ids_cond)),
              {"model_dir": model_dir, "model": "transformer", "prompt_len": L, "num_layers": len(rec),
               "note": "k_i, v_i [L, num_key_value_heads, head_dim]: layer i's understanding keys after the Q/K norm "
                       "(or k_norm_und_for_gen) and RoPE, and values, as the generation tower attends to them; they "
                       "depend on the prompt only"})
    # (c) one forward, cond and uncond prompts of different lengths; odd latent width (padded patch grid).
    lat = torch.randn((1, cfg.latent_channel, 3, 4, 3), generator=g)
    tens, runs = {"latents": lat, "input_ids_cond": torch.tensor(ids_cond), "input_ids_uncond": torch.tensor(ids_uncond)}, []
    for mode, noisy in (("t2v", [0, 1, 2]), ("i2v", [1, 2])):
        for which, ids in (("cond", ids_cond), ("uncond", ids_uncond)):
            with torch.no_grad():
                v = model(**forward_inputs(model, ids, lat, 873.5, noisy, 16.0))[0][0]
            tens[f"velocity_{mode}_{which}"] = v
    save_case(f"transformer_forward{tag}", tens,
              {"model_dir": model_dir, "model": "transformer", "timestep": 873.5, "fps": 16.0,
               "noisy_frames": {"t2v": [0, 1, 2], "i2v": [1, 2]},
               "note": "velocity_<mode>_<cond|uncond> [1, 48, T, H, W] = transformer(...).sample[0] for the prompt "
                       "ids given; the timestep embedding is added to the tokens of the noisy frames only and frames "
                       "that are not noisy are zero in the output (i2v: frame 0 clean)"})


# ---- pipelines
def make_image(name, hw):
    h, w = hw
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = np.stack([np.sin(xx / 4.0 + 1.0), np.cos(yy / 3.0), np.sin((xx + yy) / 6.0)], -1)
    im = Image.fromarray(((a * 0.5 + 0.5) * 255).clip(0, 255).astype(np.uint8), "RGB")
    rel = os.path.join("images", name + ".png")
    im.save(os.path.join(out, rel))
    return rel


def run_pipe(name, q, image_rel=None, pipe_=None, model_dir="cosmos3-tiny", gen=None):
    """One pipeline run (the globals pipe, tok, shift and g unless given) saved as case `name`."""
    pipe_ = pipe_ or pipe
    lt = (q["frames"] - 1) // 4 + 1
    lat0 = torch.randn((1, 48, lt, q["h"] // 16, q["w"] // 16), generator=gen or g)
    seen = []

    def cb(pp, i, t, kw):
        seen.append((float(t), kw["latents"].clone())); return {}
    kwargs = dict(prompt=q["prompt"], negative_prompt=q["neg"], height=q["h"], width=q["w"], num_frames=q["frames"],
                  fps=q["fps"], num_inference_steps=q["steps"], guidance_scale=q["gs"], latents=lat0.clone(),
                  output_type="pt", callback_on_step_end=cb, callback_on_step_end_tensor_inputs=["latents"],
                  enable_safety_check=False)
    tens = {}
    if image_rel:
        im = Image.open(os.path.join(out, image_rel)).convert("RGB")
        kwargs["image"] = im
        pre = _preprocess_conditioning_image(im, q["h"], q["w"])
        tens["image_preprocessed"] = pre
        # What prepare_latents does without `latents`: the image repeated over every frame, encoded and
        # normalised; its first latent frame replaces the noise there (the clean condition frame).
        with torch.no_grad():
            x0 = pipe_._encode_video(pre.unsqueeze(2).expand(-1, -1, q["frames"], -1, -1).contiguous()).float()
        tens["condition_latents"] = x0
        lat0[:, :, 0] = x0[:, :, 0]
        kwargs["latents"] = lat0.clone()
    ci, ui = pipe_.tokenize_prompt(q["prompt"], q["neg"], num_frames=q["frames"], height=q["h"], width=q["w"], fps=q["fps"])
    with torch.no_grad():
        video = pipe_(**kwargs).video
    tens.update({"initial_latents": lat0, "step_latents": torch.stack([s[1] for s in seen]),
                 "step_timesteps": torch.tensor([s[0] for s in seen]), "frames": video,
                 "input_ids_cond": torch.tensor(ci), "input_ids_uncond": torch.tensor(ui)})
    params = {"model_dir": model_dir, "prompt": q["prompt"], "negative_prompt": q["neg"], "height": q["h"],
              "width": q["w"], "num_frames": q["frames"], "fps": q["fps"], "num_inference_steps": q["steps"],
              "guidance_scale": q["gs"], "use_system_prompt": True, "scheduler": "UniPCMultistepScheduler",
              "flow_shift": shift, "pipeline_class": "Cosmos3OmniPipeline",
              "prompt_text_cond": tok.decode(ci), "prompt_text_uncond": tok.decode(ui),
              "note": "frames: output_type 'pt', float in [0, 1], [F, 3, H, W]; step_latents[i]: the scheduler's "
                      "latents after step i (callback_on_step_end); initial_latents: passed as `latents`, for I2V with the "
                      "first frame set to condition_latents' (the image repeated over the frames, VAE-encoded and "
                      "normalised, as prepare_latents does); input_ids_*: "
                      "tokenize_prompt's ids (chat template, then eos and <|vision_start|>)"}
    if image_rel:
        params["image"] = image_rel
    if pipe_.config.use_native_flow_schedule:
        params["use_native_flow_schedule"] = True
    save_case(name, tens, params)


BASE = dict(prompt="A cat walks on the grass, realistic style.", neg="blurry, low quality", h=32, w=48, frames=9,
            fps=16.0, steps=3, gs=6.0)


def native_flow_case(pipe_native):
    """pipeline_t2v_native: T2V with use_native_flow_schedule, its own initial latents; the checkpoint
    cosmos3-tiny-native is cosmos3-tiny's components (relative links) under a model_index.json that sets it."""
    ndir = os.path.join(out, "cosmos3-tiny-native")
    shutil.rmtree(ndir, ignore_errors=True)
    os.makedirs(ndir)
    idx = json.load(open(os.path.join(out, "cosmos3-tiny", "model_index.json")))
    idx["use_native_flow_schedule"] = True
    json.dump(idx, open(os.path.join(ndir, "model_index.json"), "w"), indent=2)
    for comp in ("transformer", "vae", "scheduler", "text_tokenizer"):
        os.symlink(os.path.join("..", "cosmos3-tiny", comp), os.path.join(ndir, comp))
    run_pipe("pipeline_t2v_native", dict(BASE, prompt="Sunlight through leaves over a river.", steps=4),
             pipe_=pipe_native, model_dir="cosmos3-tiny-native", gen=torch.Generator().manual_seed(3100))


if ONLY == "pipeline_t2v_native":
    tok = AutoTokenizer.from_pretrained(os.path.join(out, "cosmos3-tiny", "text_tokenizer"))
    pipe = Cosmos3OmniPipeline.from_pretrained(os.path.join(out, "cosmos3-tiny"), use_native_flow_schedule=True,
                                               enable_safety_checker=False)
    shift = pipe.scheduler.config.flow_shift
    native_flow_case(pipe)
    print("done", ONLY)
    sys.exit(0)




# ---- models
tok = make_tokenizer(out)
vocab = len(tok)
qwen = make_transformer(11, vocab)
edge = make_transformer(12, vocab, hidden_act="relu2", qk_norm_for_text=False, use_und_k_norm_for_gen=True,
                        attention_bias=True)
torch.manual_seed(13)
m48 = (0.3 * torch.randn(48, generator=g)).tolist(); s48 = (0.5 + torch.rand(48, generator=g)).tolist()
vae = AutoencoderKLWan(base_dim=8, decoder_base_dim=12, z_dim=48, dim_mult=[1, 2, 2, 2], num_res_blocks=1,
                       attn_scales=[], temperal_downsample=[False, True, True], is_residual=True, in_channels=12,
                       out_channels=12, patch_size=2, scale_factor_spatial=16, scale_factor_temporal=4,
                       latents_mean=m48, latents_std=s48).eval()
perturb_norms(vae)
shift = 3.0
sched = UniPCMultistepScheduler(prediction_type="flow_prediction", use_flow_sigmas=True, num_train_timesteps=1000,
                                flow_shift=shift, solver_order=2, solver_type="bh2", lower_order_final=True,
                                final_sigmas_type="zero", timestep_spacing="linspace")
pipe = Cosmos3OmniPipeline(transformer=qwen, text_tokenizer=tok, vae=vae, scheduler=sched, enable_safety_checker=False)
ids_cond, ids_uncond = pipe.tokenize_prompt("A cat walks on the grass, realistic style.", "blurry, low quality",
                                            num_frames=9, height=32, width=48, fps=16.0)
model_cases(qwen, "cosmos3-tiny", "", vocab, ids_cond, ids_uncond)
model_cases(edge, "cosmos3-edge-tiny", "_edge", vocab, ids_cond, ids_uncond)


base = BASE
run_pipe("pipeline_t2v", base)
run_pipe("pipeline_i2v", dict(base, prompt="A robot arm picks up a red cube."), image_rel=make_image("i2v_first", (40, 56)))

pipe.save_pretrained(os.path.join(out, "cosmos3-tiny"), safe_serialization=True)
shutil.rmtree(os.path.join(out, "text_tokenizer"))
# The template inside tokenizer_config.json, as the checkpoints ship it (not a separate chat_template.jinja).
tdir = os.path.join(out, "cosmos3-tiny", "text_tokenizer")
cfg_path = os.path.join(tdir, "tokenizer_config.json")
cfg = json.load(open(cfg_path))
cfg["chat_template"] = QWEN3_VL_CHAT_TEMPLATE
cfg["tokenizer_class"] = "Qwen2Tokenizer"
json.dump(cfg, open(cfg_path, "w"), indent=2, ensure_ascii=False)
if os.path.exists(os.path.join(tdir, "chat_template.jinja")):
    os.remove(os.path.join(tdir, "chat_template.jinja"))
assert AutoTokenizer.from_pretrained(tdir)("a cat <|vision_start|>").input_ids == tok("a cat <|vision_start|>").input_ids
edge.save_pretrained(os.path.join(out, "cosmos3-edge-tiny", "transformer"), safe_serialization=True)
native_flow_case(Cosmos3OmniPipeline(transformer=qwen, text_tokenizer=tok, vae=vae, scheduler=sched,
                                     enable_safety_checker=False, use_native_flow_schedule=True))

import diffusers, transformers, tokenizers, PIL
with open(os.path.join(out, "PROVENANCE.json"), "w") as f:
    json.dump({"diffusers": diffusers.__version__, "transformers": transformers.__version__,
               "tokenizers": tokenizers.__version__, "torch": torch.__version__, "pillow": PIL.__version__,
               "device": "cpu", "dtype": "float32", "script": "tests/golden/tools/make_golden_cosmos3.py"}, f, indent=1)
print("done", sorted(os.listdir(cases)))
