#!/usr/bin/env python3
"""Speedup over one GPU against the GPU count, from run_scaling.sh's measurements (issue 9).

Usage: plot_scaling.py DIT_JSONL VAE_JSONL OUT_SVG
DIT_JSONL: vgen_dit_bench --cfg-step lines tagged "scaling" (one CFG step: both text streams); the
mode "single" is the one-GPU baseline of each shape. VAE_JSONL: vgen_vae_bench lines tagged
"scaling" (parallel_vae_size 1 is the baseline). Prints a table with issue 9's targets and writes
an SVG (no plotting library needed): one panel per DiT shape and one for the VAE, a line of ideal
scaling, one marker per mesh, labelled.
"""
import json
import sys


def load(path):
    try:
        return [json.loads(l) for l in open(path) if l.startswith("{") and '"scaling"' in l]
    except FileNotFoundError:
        return []


def latest(rows, key):
    out = {}
    for r in rows:  # a later measurement of the same key replaces an earlier one
        out[key(r)] = r
    return out


def panel(x0, y0, w, h, title, points, max_n):
    """points: [(gpus, speedup, label)] -> SVG elements of one panel."""
    max_s = max([max_n] + [p[1] for p in points]) * 1.05
    sx = lambda n: x0 + 40 + (w - 60) * (n / max_n)
    sy = lambda s: y0 + h - 30 - (h - 60) * (s / max_s)
    e = [f'<rect x="{x0}" y="{y0}" width="{w}" height="{h}" fill="white" stroke="#ccc"/>',
         f'<text x="{x0 + w / 2}" y="{y0 + 18}" text-anchor="middle" font-size="13">{title}</text>',
         f'<line x1="{sx(0)}" y1="{sy(0)}" x2="{sx(max_n)}" y2="{sy(max_n)}" stroke="#bbb" stroke-dasharray="4 3"/>',
         f'<line x1="{sx(0)}" y1="{sy(0)}" x2="{sx(max_n)}" y2="{sy(0)}" stroke="black"/>',
         f'<line x1="{sx(0)}" y1="{sy(0)}" x2="{sx(0)}" y2="{sy(max_s)}" stroke="black"/>']
    n = 1
    while n <= max_n:
        e.append(f'<text x="{sx(n)}" y="{sy(0) + 14}" text-anchor="middle" font-size="10">{n}</text>')
        e.append(f'<text x="{sx(0) - 6}" y="{sy(n) + 3}" text-anchor="end" font-size="10">{n}</text>')
        n *= 2
    e.append(f'<text x="{x0 + w / 2}" y="{y0 + h - 4}" text-anchor="middle" font-size="10">GPUs '
             '(dashed: ideal)</text>')
    for i, (g, s, label) in enumerate(sorted(points)):
        e.append(f'<circle cx="{sx(g)}" cy="{sy(s)}" r="4" fill="#1f77b4"/>')
        e.append(f'<text x="{sx(g) - 6}" y="{sy(s) - 6 - 11 * (i % 3)}" text-anchor="end" font-size="9">'
                 f'{label} {s:.2f}x</text>')
    return e


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    # A shape at one layer count is a panel: a smoke run with fewer layers never mixes with it.
    dit = latest(load(sys.argv[1]), lambda r: (r["height"], r.get("layers", 0), r["mode"]))
    vae = latest(load(sys.argv[2]), lambda r: (r["height"], r.get("parallel_vae_size", 1)))
    panels, max_n = [], 2
    print("%-6s %-26s %5s %9s %8s  %s" % ("shape", "mesh", "GPUs", "s/step", "speedup", "target (40 layers)"))
    for h, layers in sorted({k[:2] for k in dit}, reverse=True):
        base = dit.get((h, layers, "single"))
        if not base:
            print(f"{h}p, {layers} layers: no one-GPU baseline measured")
            continue
        pts = []
        for (hh, ll, mode), r in sorted(dit.items()):
            if (hh, ll) != (h, layers):
                continue
            s = base["seconds"] / r["seconds"]
            max_n = max(max_n, r["ranks"])
            tgt = ">= 7.0" if mode == "cfg2-ulysses4" and r["ranks"] == 8 and layers == 40 else "-"
            print("%-6s %-26s %5d %9.3f %7.2fx  %s" % (f"{h}p", mode, r["ranks"], r["seconds"], s, tgt))
            if mode != "single":
                pts.append((r["ranks"], s, mode))
        panels.append((f"DiT {h}p, one CFG step ({layers} layers), speedup over 1 GPU", pts))
    vbase = {h: r for (h, n), r in vae.items() if n == 1}
    vpts = []
    for (h, n), r in sorted(vae.items()):
        if h in vbase:
            s = vbase[h]["seconds"] / r["seconds"]
            max_n = max(max_n, n)
            print("%-6s %-26s %5d %9.3f %7.2fx  %s" % (f"{h}p", f"VAE decode, parallel {n}", n, r["seconds"], s,
                                                      ">= 3.3" if n == 8 else "-"))
            if n > 1:
                vpts.append((n, s, f"{h}p"))
    if vpts:
        panels.append(("VAE decode, parallel VAE, speedup over 1 rank", vpts))
    W, H = 420, 320
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W * len(panels)}" height="{H}" '
           'font-family="sans-serif">']
    for i, (title, pts) in enumerate(panels):
        svg += panel(i * W, 0, W - 10, H, title, pts, max_n)
    svg.append("</svg>")
    with open(sys.argv[3], "w") as f:
        f.write("\n".join(svg) + "\n")
    print(f"plot: {sys.argv[3]} ({len(panels)} panels)")


if __name__ == "__main__":
    main()
