"""Test images and their expected pixels, made with Pillow and transformers (versions in PROVENANCE.json).

files/*.png, files/*.jpg: small images in every PNG colour type and bit depth (palette, grey 1-16
bits, alpha, tRNS, Adam7 interlace, eXIf and XMP orientation) and JPEG kind (4:2:0, 4:2:2, 4:4:4,
grey, progressive, CMYK, restart markers, EXIF orientation 1-8, XMP orientation).
expected.safetensors (uint8 and float32 tensors) and cases.json:
  decoded_<file name>     ImageOps.exif_transpose(Image.open(f)).convert("RGB")  [H, W, 3] u8
  resize_<i>_in/_out      Image.resize((w, h), filter) of an RGB image             [H, W, 3] u8
  clip_<i>_in, clip_<i>   CLIPImageProcessorPil(**config)(image).pixel_values[0]    [3, h, w] f32
  vae_<i>_in, vae_<i>     diffusers' VaeImageProcessor.preprocess steps             [3, h, w] f32
    (floor to vae_scale_factor, PIL Lanczos resize, float32 /255, 2x-1; diffusers needs torch, so its
    four numpy/torch lines are written out here)
Usage: python make_images.py OUTDIR
"""
import io, json, os, random, struct, sys, zlib
import numpy as np
from PIL import Image, ImageOps, features
import PIL
import transformers
from transformers import CLIPImageProcessorPil

out = sys.argv[1]
files = os.path.join(out, "files")
os.makedirs(files, exist_ok=True)
rnd = random.Random(7)
nrs = np.random.RandomState(7)


def picture(h, w, seed, channels=3):
    """Smooth colours with edges and noise: resampling and chroma subsampling both see structure."""
    r = np.random.RandomState(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float64)
    planes = [127.5 + 110 * np.sin(xx / (2 + 3 * r.rand()) + yy / (3 + 4 * r.rand()) + 6 * r.rand())
              for _ in range(channels)]
    a = np.stack(planes, -1) + ((xx // 4 + yy // 3) % 2)[..., None] * 40 - 20 + r.randint(-12, 13, (h, w, channels))
    return np.clip(a, 0, 255).astype(np.uint8)


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def raw_png(path, rows, width, height, bit_depth, color_type, interlace=False, extra=b""):
    """A PNG written by hand (Pillow cannot write 2/4-bit grey or Adam7): rows(x0, dx, y0, dy) gives the
    packed scanlines of one (sub)image."""
    passes = [(0, 8, 0, 8), (4, 8, 0, 8), (0, 4, 4, 8), (2, 4, 0, 4), (0, 2, 2, 4), (1, 2, 0, 2), (0, 1, 1, 2)]
    raw = b""
    for x0, dx, y0, dy in (passes if interlace else [(0, 1, 0, 1)]):
        if x0 >= width or y0 >= height:
            continue
        for line in rows(x0, dx, y0, dy):
            raw += b"\0" + line
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, 1 if interlace else 0)
    data = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + extra + png_chunk(b"IDAT", zlib.compress(raw)) + \
        png_chunk(b"IEND", b"")
    open(path, "wb").write(data)


def pack_bits(values, bits):
    out, acc, n = bytearray(), 0, 0
    for v in values:
        acc = (acc << bits) | int(v)
        n += bits
        if n == 8:
            out.append(acc); acc, n = 0, 0
    if n:
        out.append(acc << (8 - n))
    return bytes(out)


def exif_bytes(orientation):
    e = Image.Exif()
    e[0x0112] = orientation
    return e.tobytes()


def xmp_packet(orientation):
    return ('<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">'
            '<rdf:Description xmlns:tiff="http://ns.adobe.com/tiff/1.0/" tiff:Orientation="%d"/></rdf:RDF>'
            '</x:xmpmeta>' % orientation).encode()


def make_pngs():
    base = picture(13, 19, 1)
    alpha = picture(13, 19, 2, 1)[..., 0]
    Image.fromarray(base, "RGB").save(os.path.join(files, "rgb8.png"))
    Image.fromarray(np.dstack([base, alpha]), "RGBA").save(os.path.join(files, "rgba8.png"))
    Image.fromarray(base[..., 0], "L").save(os.path.join(files, "grey8.png"))
    Image.fromarray(np.dstack([base[..., 1], alpha]), "LA").save(os.path.join(files, "grey_alpha8.png"))
    Image.fromarray(base[..., 2] > 128).save(os.path.join(files, "grey1.png"))
    Image.fromarray(base, "RGB").quantize(7).save(os.path.join(files, "palette8.png"))
    Image.fromarray(base, "RGB").quantize(12).save(os.path.join(files, "palette4.png"), bits=4)
    Image.fromarray(base, "RGB").quantize(9).save(os.path.join(files, "palette_trns.png"), transparency=3)
    Image.fromarray(base, "RGB").save(os.path.join(files, "rgb_trns.png"), transparency=(10, 20, 30))
    h, w = base.shape[:2]
    wide16 = (base.astype(np.uint16) * 257 + nrs.randint(0, 256, base.shape)).astype(">u2")
    grey16 = np.where(np.arange(w)[None, :] % 3 == 0, base[..., 0], base[..., 0].astype(np.uint32) * 200).astype(">u2")
    sub = lambda a, x0, dx, y0, dy: [a[y, x0::dx].tobytes() for y in range(y0, h, dy)]
    raw_png(os.path.join(files, "rgb16.png"), lambda *p: sub(wide16, *p), w, h, 16, 2)
    rgba16 = np.dstack([wide16, (alpha.astype(np.uint16) * 257).astype(">u2")])
    raw_png(os.path.join(files, "rgba16.png"), lambda *p: sub(rgba16, *p), w, h, 16, 6)
    raw_png(os.path.join(files, "grey16.png"), lambda *p: sub(grey16, *p), w, h, 16, 0)
    ga16 = np.dstack([wide16[..., 0], wide16[..., 1]])
    raw_png(os.path.join(files, "grey_alpha16.png"), lambda *p: sub(ga16, *p), w, h, 16, 4)
    for bits in (2, 4):
        q = (base[..., 1] >> (8 - bits)).astype(np.uint8)
        raw_png(os.path.join(files, f"grey{bits}.png"),
                lambda x0, dx, y0, dy, q=q, bits=bits: [pack_bits(q[y, x0::dx], bits) for y in range(y0, h, dy)],
                w, h, bits, 0)
    raw_png(os.path.join(files, "rgb8_adam7.png"), lambda *p: sub(base, *p), w, h, 8, 2, interlace=True)
    pal = Image.fromarray(base, "RGB").quantize(4)
    pal_idx, pal_rgb = np.array(pal), bytes(pal.getpalette()[:12])
    raw_png(os.path.join(files, "palette2_adam7.png"),
            lambda x0, dx, y0, dy: [pack_bits(pal_idx[y, x0::dx], 2) for y in range(y0, h, dy)], w, h, 2, 3,
            interlace=True, extra=png_chunk(b"PLTE", pal_rgb))
    Image.fromarray(base, "RGB").save(os.path.join(files, "exif6.png"), exif=exif_bytes(6))
    raw_png(os.path.join(files, "exif8_late.png"), lambda *p: sub(base, *p), w, h, 8, 2)
    data = open(os.path.join(files, "exif8_late.png"), "rb").read()  # eXIf after IDAT
    data = data[:-12] + png_chunk(b"eXIf", exif_bytes(8)[6:]) + data[-12:]
    open(os.path.join(files, "exif8_late.png"), "wb").write(data)
    from PIL.PngImagePlugin import PngInfo
    info = PngInfo()
    info.add_itxt("XML:com.adobe.xmp", xmp_packet(3).decode())
    Image.fromarray(base, "RGB").save(os.path.join(files, "xmp3.png"), pnginfo=info)


def make_jpegs():
    base = picture(21, 30, 3)
    im = Image.fromarray(base, "RGB")
    im.save(os.path.join(files, "q90_420.jpg"), quality=90, subsampling=2)
    im.save(os.path.join(files, "q75_422.jpg"), quality=75, subsampling=1)
    im.save(os.path.join(files, "q95_444.jpg"), quality=95, subsampling=0)
    im.save(os.path.join(files, "progressive_420.jpg"), quality=85, progressive=True)
    im.save(os.path.join(files, "restart_420.jpg"), quality=80, restart_marker_blocks=1)
    Image.fromarray(picture(17, 23, 4), "RGB").save(os.path.join(files, "odd_420.jpg"), quality=88)
    Image.fromarray(base[..., 0], "L").save(os.path.join(files, "grey.jpg"), quality=90)
    Image.fromarray(picture(21, 30, 5, 4), "CMYK").save(os.path.join(files, "cmyk.jpg"), quality=90)
    for o in range(1, 9):
        im.save(os.path.join(files, f"exif{o}.jpg"), quality=90, exif=exif_bytes(o))
    im.save(os.path.join(files, "xmp6.jpg"), quality=90, xmp=xmp_packet(6))


tensors, cases = {}, {"decoded": [], "resize": [], "clip": [], "vae": []}
make_pngs()
make_jpegs()
for name in sorted(os.listdir(files)):
    with Image.open(os.path.join(files, name)) as im:
        tensors["decoded_" + name] = np.array(ImageOps.exif_transpose(im).convert("RGB"))
    cases["decoded"].append("files/" + name)

filters = {"lanczos": Image.LANCZOS, "bicubic": Image.BICUBIC, "bilinear": Image.BILINEAR, "box": Image.BOX,
           "hamming": Image.HAMMING}
sizes = [((37, 53), (32, 48)), ((50, 30), (25, 15)), ((16, 16), (64, 40)), ((1, 9), (5, 3)), ((60, 2), (7, 1)),
         ((400, 3), (50, 2)), ((33, 41), (33, 20)), ((29, 31), (61, 31)), ((45, 80), (30, 52))]
for i in range(24):
    (h, w), (oh, ow) = sizes[i] if i < len(sizes) else ((rnd.randint(1, 70), rnd.randint(1, 70)),
                                                         (rnd.randint(1, 90), rnd.randint(1, 90)))
    f = list(filters)[i % len(filters)]
    src = picture(h, w, 100 + i)
    tensors[f"resize_{i}_in"] = src
    tensors[f"resize_{i}_out"] = np.array(Image.fromarray(src, "RGB").resize((ow, oh), filters[f]))
    cases["resize"].append({"height": oh, "width": ow, "filter": f})

clip_configs = [
    dict(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}),  # the fixture's
    dict(size={"shortest_edge": 24}, crop_size={"height": 20, "width": 24}),
    dict(size={"shortest_edge": 40}, crop_size={"height": 48, "width": 52}),  # crop larger: zero padding
    dict(size={"height": 30, "width": 20}, crop_size={"height": 25, "width": 15}, resample=2),
    dict(size={"shortest_edge": 19}, do_center_crop=False, image_mean=0.5, image_std=[0.25, 0.5, 0.75]),
]
clip_sizes = [(53, 37), (37, 53), (29, 29), (64, 33), (17, 90), (70, 93)]
for i, (h, w) in enumerate(clip_sizes * 2):
    cfg = dict(clip_configs[i % len(clip_configs)])
    src = picture(h, w, 200 + i)
    proc = CLIPImageProcessorPil(**cfg)
    tensors[f"clip_{i}_in"] = src
    tensors[f"clip_{i}"] = proc(images=Image.fromarray(src, "RGB"), return_tensors="np").pixel_values[0]
    cases["clip"].append({"config": cfg})

for i, ((h, w), (th, tw), vsf) in enumerate([((37, 53), (32, 48), 8), ((32, 48), (32, 48), 16), ((45, 80), (30, 52), 8),
                                              ((50, 30), (37, 21), 8), ((50, 100), (40, 70), 16)]):
    src = picture(h, w, 300 + i)
    th2, tw2 = th - th % vsf, tw - tw % vsf
    im = Image.fromarray(src, "RGB").resize((tw2, th2), resample=Image.LANCZOS, reducing_gap=None)
    arr = np.array(im).astype(np.float32) / 255.0                 # VaeImageProcessor.pil_to_numpy
    arr = arr.transpose(2, 0, 1)                                  # numpy_to_pt (layout only)
    tensors[f"vae_{i}_in"] = src
    tensors[f"vae_{i}"] = (np.float32(2.0) * arr - np.float32(1.0)).astype(np.float32)  # normalize
    cases["vae"].append({"height": th, "width": tw, "vae_scale_factor": vsf})


def save_safetensors(path, ts):
    header, blobs, off = {}, [], 0
    for k in sorted(ts):
        a = np.ascontiguousarray(ts[k])
        dt = {np.dtype(np.uint8): "U8", np.dtype(np.float32): "F32"}[a.dtype]
        b = a.astype(a.dtype.newbyteorder("<")).tobytes()
        header[k] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b); off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


save_safetensors(os.path.join(out, "expected.safetensors"), tensors)
json.dump(cases, open(os.path.join(out, "cases.json"), "w"), indent=1)
json.dump({"pillow": PIL.__version__, "libjpeg_turbo": features.version("libjpeg_turbo"),
           "transformers": transformers.__version__, "numpy": np.__version__}, open(os.path.join(out, "PROVENANCE.json"), "w"),
          indent=1)
print("done", len(tensors), "tensors")
