#!/usr/bin/env python3
"""Image-to-video benchmark inputs: N distinct 8-bit RGB PNGs of WIDTH x HEIGHT and a JSONL prompt file.

Writes DIR/image_<i>.png (smooth colour gradients with a per-image phase, so no two are alike and none
is flat) and DIR/prompts.jsonl, one line per image: {"prompt": ..., "image": "image_<i>.png"} (paths
relative to the prompt file, as vgen reads them). Standard library only (zlib), so it runs on the GPU
machine's bare Python. Used by scripts/bench/gpu_suite.sh (ti2v, i2v_batch).

  python3 make_bench_images.py --out DIR --count 8 --width 832 --height 480
  python3 make_bench_images.py --out DIR --count 1 --width 1280 --height 704 --prompt "a red fox ..."
  python3 make_bench_images.py --selftest
"""
import argparse
import json
import math
import os
import struct
import sys
import tempfile
import zlib

PROMPTS = [
    "a red fox running through fresh snow at dawn",
    "waves rolling onto a rocky beach under a grey sky",
    "a paper boat drifting down a rain-filled street",
    "leaves swirling in the wind across a park path",
    "a hot air balloon rising over green hills",
    "city lights flickering on as the sun sets",
    "a cat stretching on a sunny windowsill",
    "steam rising from a cup of coffee on a wooden table",
]


def png_bytes(width, height, rows):
    """An 8-bit RGB PNG of `rows` (height byte strings of 3 * width bytes each)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + r for r in rows)  # filter type 0 per row
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def image_rows(width, height, index):
    """Gradients in three directions with a per-image phase; values in 16..239."""
    ph = 0.7 * index + 0.3
    cols = [[int(128 + 111 * math.sin(2 * math.pi * (x / width) * (1 + c) + ph * (c + 1))) for x in range(width)]
            for c in range(3)]
    rows = []
    for y in range(height):
        fy = [0.5 + 0.5 * math.cos(2 * math.pi * y / height * (c + 1) + ph) for c in range(3)]
        row = bytearray(3 * width)
        for c in range(3):
            base = 16 + int(60 * fy[c])
            row[c::3] = bytes(min(239, max(16, (v * 3 + base * 2) // 5)) for v in cols[c])
        rows.append(bytes(row))
    return rows


def write_set(out, count, width, height, prompt=None):
    os.makedirs(out, exist_ok=True)
    lines = []
    for i in range(count):
        name = "image_%d.png" % i
        with open(os.path.join(out, name), "wb") as f:
            f.write(png_bytes(width, height, image_rows(width, height, i)))
        lines.append(json.dumps({"prompt": prompt or PROMPTS[i % len(PROMPTS)], "image": name}))
    with open(os.path.join(out, "prompts.jsonl"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return [os.path.join(out, "image_%d.png" % i) for i in range(count)]


def selftest():
    with tempfile.TemporaryDirectory() as d:
        paths = write_set(d, 3, 40, 24)
        data = [open(p, "rb").read() for p in paths]
        assert len(set(data)) == 3, "images must differ"
        for b in data:
            assert b[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", b[16:24]) == (40, 24)
            n = struct.unpack(">I", b[33:37])[0]  # IDAT length after the 25-byte IHDR chunk
            raw = zlib.decompress(b[41:41 + n])
            assert len(raw) == 24 * (1 + 3 * 40)
        try:  # the pixels as Pillow reads them, where it is installed
            from PIL import Image
            im = Image.open(paths[0])
            px = im.tobytes()
            assert im.size == (40, 24) and im.mode == "RGB" and len({px[i:i + 3] for i in range(0, len(px), 3)}) > 10
        except ImportError:
            pass
        lines = [json.loads(l) for l in open(os.path.join(d, "prompts.jsonl"))]
        assert [l["image"] for l in lines] == ["image_0.png", "image_1.png", "image_2.png"], lines
        assert len({l["prompt"] for l in lines}) == 3
    print("make_bench_images selftest: OK")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--width", type=int, default=832)
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--prompt", help="one prompt for every line (default: a list of distinct ones)")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    if a.selftest:
        selftest()
        return 0
    if not a.out or a.count < 1 or a.width < 1 or a.height < 1:
        ap.error("--out DIR, --count >= 1 and positive sizes are needed")
    write_set(a.out, a.count, a.width, a.height, a.prompt)
    print("make_bench_images: %d image(s) of %dx%d and prompts.jsonl in %s" % (a.count, a.width, a.height, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
