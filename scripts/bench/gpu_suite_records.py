#!/usr/bin/env python3
"""The JSON side of scripts/bench/gpu_suite.sh: records, the parsers of what the suites print, the table.

A record is one JSON object per line:
  {"date", "gpu", "gpus", "commit", "suite", "impl", "args", "result": {...}, "invocation"[, "dry_run"]}
date, gpu, gpus, commit and invocation come from the environment gpu_suite.sh sets (GS_GPU, GS_NGPU,
VGEN_COMMIT, GS_INVOCATION, GS_DRY); "result" holds the numbers (a benchmark's own JSON line where it
prints one).

  gpu_suite_records.py emit SUITE IMPL ARGS (JSON | @FILE)   records to stdout (@FILE: one per JSON
                                                             line of FILE, a {"done": ...} line left out)
  gpu_suite_records.py ctest LOG RC                          ctest's summary as JSON
  gpu_suite_records.py vgen-timing DIR WALL RC CACHE         the numbers of a vgen run's DIR/timing.json
                                                             (--load-only: DIR/load.json)
  gpu_suite_records.py cosmos3-timing DIR WALL RC             vgen-timing plus the steps of a Cosmos 3 video: the
                                                             median step after the first, the first step's excess
                                                             (the prefills run in it) and its share of the render
  gpu_suite_records.py vgen-videos DIR WALL RC               every video of a vgen run's DIR/timing.json (one
                                                             JSON line each) and a summary line: the first
                                                             video against the median of the rest
  gpu_suite_records.py peer-result LOG WALL RC CACHE         the peer's last JSON line plus wall time
  gpu_suite_records.py since T0 T1                           T1 - T0, rounded to ms
  gpu_suite_records.py table RESULTS INVOCATION              the table of one call's records
  gpu_suite_records.py selftest                              checks the above on made-up input
"""
import json
import os
import re
import statistics
import sys
import tempfile
import time


def emit(suite, impl, args, res, env=os.environ):
    rows = []
    if res.startswith("@"):
        try:
            with open(res[1:]) as f:
                rows = [json.loads(l) for l in f if l.lstrip().startswith("{")]
        except (OSError, ValueError) as e:
            rows = [{"error": "unreadable results: %s" % e}]
        rows = [r for r in rows if not r.get("done")]
    else:
        rows = [json.loads(res)]
    dry = env.get("GS_DRY") == "1"
    if dry and not rows:
        rows = [{}]
    out = []
    for r in rows:
        rec = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpu": env.get("GS_GPU", "unknown"),
               "gpus": int(env.get("GS_NGPU", "0")), "commit": env.get("VGEN_COMMIT", "unknown"), "suite": suite,
               "impl": impl, "args": args, "result": r, "invocation": env.get("GS_INVOCATION", "")}
        if dry:
            rec["dry_run"] = True
        out.append(json.dumps(rec))
    return out


def ctest_summary(text, rc):
    m = re.search(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)", text)
    failed = re.findall(r"^\s*\d+ - (\S+) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|Exception|Not Run)\)",
                        text, re.M)
    skipped = re.findall(r"^\s*\d+/\d+ Test +#\d+: (\S+) \.+\s*\*+Skipped", text, re.M)
    r = {"rc": rc, "failed_tests": failed, "skipped_tests": skipped}
    if m:
        total, nfail = int(m.group(3)), int(m.group(2))
        r.update(total=total, failed=nfail, passed=total - nfail)
    return r


def vgen_timing(out_dir, wall, rc, cache):
    r = {"wall_seconds": wall, "rc": rc, "page_cache": cache}
    names = ("timing.json", "load.json")  # a render's report; --load-only writes load.json alone
    path = next((os.path.join(out_dir, n) for n in names if os.path.exists(os.path.join(out_dir, n))), None)
    try:
        with open(path or os.path.join(out_dir, names[0])) as f:
            t = json.load(f)
    except (OSError, ValueError) as e:
        r["error"] = "no report: %s" % e
        return r
    r["report"] = os.path.basename(path)
    load = t.get("load") or {}
    r["load_seconds"] = load.get("seconds", t.get("load_seconds"))
    for k in ("bytes_read", "components"):
        if k in load:
            r["load_" + k] = load[k]
    v = (t.get("videos") or [None])[0]
    if v:
        r.update(video_numbers(v))
    return r


def _num(x):
    return x if isinstance(x, (int, float)) else None


def video_numbers(v):
    """One timing.json video's seconds; render_seconds_without_output leaves out the video's write (raw
    frames without FFmpeg), which the peer (output_type "np") does not do."""
    s = v.get("seconds") or {}
    total, out = _num(s.get("total")), _num(s.get("mp4_encode"))
    r = dict(status=v.get("status"), render_seconds=total, text_encode_seconds=s.get("text_encode"),
             denoise_seconds=s.get("denoise"), vae_decode_seconds=s.get("vae_decode"),
             mp4_encode_seconds=s.get("mp4_encode"), peak_memory_bytes=v.get("peak_memory_bytes"),
             frames=v.get("frames"), height=v.get("height"), width=v.get("width"))
    if "image_encode" in s or "vae_encode" in s:  # image-conditioned lines
        r.update(image_encode_seconds=s.get("image_encode"), vae_encode_seconds=s.get("vae_encode"))
    if total is not None:
        r["render_seconds_without_output"] = total - (out or 0.0)
    return r


def cosmos3_timing(out_dir, wall, rc):
    """vgen_timing plus the per-step seconds: vgen prepares each prompt's K/V (the prefill) lazily inside
    the first step, so the first step's excess over the median of the others bounds the prefills' cost."""
    r = vgen_timing(out_dir, wall, rc, "warm")
    try:
        with open(os.path.join(out_dir, "timing.json")) as f:
            steps = ((json.load(f).get("videos") or [{}])[0].get("seconds") or {}).get("steps") or []
    except (OSError, ValueError):
        steps = []
    if len(steps) >= 2:
        med = statistics.median(steps[1:])
        r.update(steps_run=len(steps), step_seconds=med, first_step_seconds=steps[0],
                 first_step_excess_seconds=steps[0] - med)
        if _num(r.get("render_seconds")):
            r["first_step_excess_share"] = (steps[0] - med) / r["render_seconds"]
    return r


def cosmos3_rows(recs):
    """The Cosmos 3 lines of the table: one CFG step of the DiT per shape and precision (the peer in bf16),
    the prefill's share of a video's DiT time, and the one-video comparison."""
    lines, steps, share = [], {}, {}
    for r in recs:
        res = r["result"]
        if r["suite"] != "cosmos3" or not _num(res.get("seconds")):
            continue
        prec = res.get("precision", "bf16") if r["impl"] == "vgen" else "bf16"
        steps.setdefault((res.get("height") or 0, res.get("layers")), {}).setdefault(prec, {"vgen": [], "diffusers": []})[
            r["impl"]].append(res["seconds"])
        if r["impl"] == "vgen" and _num(res.get("prefill_share_of_dit")):
            share.setdefault((res.get("height") or 0, prec), []).append(res["prefill_share_of_dit"])
    for (h, layers), by in sorted(steps.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
        peer = by.get("bf16", {}).get("diffusers", [])
        for prec, v in sorted(by.items()):
            lines.append("%-7s %-28s %-20s %-20s %s" % ("cosmos3", "%sp %sL CFG step %s" % (h, layers, prec),
                                                        _fmt(v["vgen"]), _fmt(peer), _ratio(v["vgen"], peer)))
    for (h, prec), v in sorted(share.items()):
        lines.append("%-7s %-28s %-20s %-20s %s" % ("cosmos3", "%sp prefill/DiT %s" % (h, prec), _fmt(v), "-", "-"))
    for k in ("load_seconds", "render_seconds", "step_seconds", "first_step_excess_share"):
        v = {imp: [r["result"][k] for r in recs if r["suite"] == "cosmos3_e2e" and r["impl"] == imp
                   and r["result"].get("rc", 0) == 0 and "error" not in r["result"] and _num(r["result"].get(k))]
             for imp in ("vgen", "diffusers")}
        if v["vgen"] or v["diffusers"]:
            lines.append("%-7s %-28s %-20s %-20s %s" % ("c3_e2e", k, _fmt(v["vgen"]), _fmt(v["diffusers"]),
                                                        _ratio(v["vgen"], v["diffusers"])))
    return lines


def vgen_videos(out_dir, wall, rc):
    """Every video of a vgen run (one row each) and a summary row: the first video against the median
    of the others (a job whose videos after the first cost what the first does reloads nothing)."""
    head = vgen_timing(out_dir, wall, rc, "warm")
    if "error" in head:
        return [dict(head, summary=True)]
    with open(os.path.join(out_dir, head["report"])) as f:
        videos = json.load(f).get("videos") or []
    rows = []
    for i, v in enumerate(videos):
        rows.append(dict(video_numbers(v), video=v.get("index", i), name=v.get("name")))
    ok = [r for r in rows if r["status"] == "ok" and r["render_seconds"] is not None]
    summary = dict(summary=True, videos=len(rows), videos_ok=len(ok), load_seconds=head.get("load_seconds"),
                   wall_seconds=wall, rc=rc)
    for key, name in (("render_seconds", ""), ("render_seconds_without_output", "_without_output")):
        xs = [r[key] for r in ok if r.get(key) is not None]
        if len(xs) >= 2:
            rest = statistics.median(xs[1:])
            summary.update({"first_seconds" + name: xs[0], "rest_median_seconds" + name: rest,
                            "rest_over_first" + name: rest / xs[0] if xs[0] else None})
    for key in ("text_encode_seconds", "image_encode_seconds", "vae_encode_seconds", "denoise_seconds",
                "vae_decode_seconds", "mp4_encode_seconds"):
        xs = [r[key] for r in ok if isinstance(r.get(key), (int, float))]
        if xs:
            summary[key.replace("_seconds", "_median_seconds")] = statistics.median(xs)
    return rows + [summary]


def peer_result(text, wall, rc, cache):
    rows = []
    for l in text.splitlines():
        if l.startswith("{"):
            try:
                rows.append(json.loads(l))
            except ValueError:
                pass
    rows = [x for x in rows if not x.get("done")]  # a closing {"done": ...} line carries no numbers
    r = rows[-1] if rows else {"error": "no result line (see the log)"}
    r.update(wall_seconds=wall, rc=rc, page_cache=cache)
    return r


def _mean(xs):
    return statistics.mean(xs) if xs else None


def _fmt(xs):
    return "/".join("%.3f" % x for x in xs) if xs else "-"


def _ratio(a, b):
    return "%.4f" % (_mean(a) / _mean(b)) if a and b else "-"


def table(recs):
    lines = ["", "suite   what                         vgen                 peer                 vgen/peer"]
    for r in recs:
        res = r["result"]
        if r["suite"] == "tests":
            bad = res.get("failed_tests")
            lines.append("tests   ctest -L gpu                 %s/%s passed%s" % (
                res.get("passed", "?"), res.get("total", "?"), "  FAILED: " + " ".join(bad) if bad else ""))
        elif r["suite"] == "golden":
            lines.append("golden  %-28s %s passed, %s failed" % ("%s %s" % (res.get("mesh"), res.get("precision")),
                                                                 res.get("passed"), res.get("failed")))
    for bench, suites in (("dit_forward", ("dit", "peer", "scaling")), ("vae_decode", ("vae", "peer", "scaling")),
                          ("dit_forward", ("dit_i2v", "peer_i2v")), ("vae_decode", ("vae22", "peer_i2v"))):
        label = {"dit_i2v": "dit_i2v", "vae22": "vae22"}.get(suites[0], bench.split("_")[0])
        rows = {}
        for r in recs:
            res = r["result"]
            if r["suite"] not in suites or res.get("bench") != bench or "seconds" not in res:
                continue
            mode = "single"
            if r["impl"] == "vgen" and bench == "dit_forward":
                mode = res.get("mode", "single") + (" cfg-step" if res.get("cfg_step") else "")
            elif r["impl"] == "vgen" and res.get("ranks", 1) > 1:
                mode = "parallel_vae_%d" % res["ranks"]
            # A cfg mode's measurement holds both streams' forwards (one per GPU): per forward here.
            per = res.get("forwards_per_measurement", 1) if not res.get("cfg_step") else 1
            rows.setdefault((res.get("height") or 0, mode), {"vgen": [], "diffusers": []}).setdefault(
                r["impl"], []).append(res["seconds"] / per)
        for (h, mode), v in sorted(rows.items(), key=lambda kv: (kv[0][1] != "single", kv[0][1], kv[0][0])):
            lines.append("%-7s %-28s %-20s %-20s %s" % (
                label, "%sp %s" % (h, mode), _fmt(v.get("vgen")), _fmt(v.get("diffusers")),
                _ratio(v.get("vgen"), v.get("diffusers")) if mode == "single" else "-"))
    # vae22: the peak memory beside the time (the target: no more than the peer's)
    peaks = {}
    for r in recs:
        res = r["result"]
        if r["suite"] in ("vae22", "peer_i2v") and res.get("bench") == "vae_decode":
            g = res.get("peak_gib", res.get("peak_mem_gib"))
            if isinstance(g, (int, float)):
                peaks.setdefault(res.get("height") or 0, {"vgen": [], "diffusers": []}).setdefault(
                    r["impl"], []).append(g)
    for h, v in sorted(peaks.items()):
        lines.append("%-7s %-28s %-20s %-20s %s" % ("vae22", "%sp peak GiB" % h, _fmt(v.get("vgen")),
                                                    _fmt(v.get("diffusers")), _ratio(v.get("vgen"), v.get("diffusers"))))
    # ti2v: the peer has no separate output write, so its render stands against vgen's without it.
    for r in recs:
        res = r["result"]
        if r["suite"] == "ti2v" and r["impl"] == "diffusers" and "render_seconds" in res:
            res.setdefault("render_seconds_without_output", res["render_seconds"])
        if r["suite"] == "ti2v" and isinstance(res.get("load_seconds"), (int, float)) and \
                isinstance(res.get("render_seconds"), (int, float)):
            res.setdefault("load_plus_render_seconds", res["load_seconds"] + res["render_seconds"])
    for suite, keys in (("load", ("load_seconds", "wall_seconds")),
                        ("e2e", ("load_seconds", "render_seconds", "wall_seconds")),
                        ("ti2v", ("load_seconds", "render_seconds", "render_seconds_without_output",
                                  "load_plus_render_seconds", "wall_seconds"))):
        for k in keys:
            # A failed process counts nowhere (its wall time would look like a fast one).
            v = {imp: [r["result"][k] for r in recs if r["suite"] == suite and r["impl"] == imp
                       and r["result"].get("rc", 0) == 0 and "error" not in r["result"]
                       and isinstance(r["result"].get(k), (int, float))] for imp in ("vgen", "diffusers")}
            if v["vgen"] or v["diffusers"]:
                shown = {"render_seconds_without_output": "render (no output write)",
                         "load_plus_render_seconds": "load + render"}.get(k, k)
                lines.append("%-7s %-28s %-20s %-20s %s" % (suite, shown, _fmt(v["vgen"]), _fmt(v["diffusers"]),
                                                            _ratio(v["vgen"], v["diffusers"])))
    # i2v_batch: one job's videos, the first against the median of the rest (vgen alone)
    for r in recs:
        res = r["result"]
        if r["suite"] == "i2v_batch" and res.get("summary") and res.get("videos") is not None:
            first, rest = res.get("first_seconds"), res.get("rest_median_seconds")
            lines.append("%-7s %-28s %-20s %-20s %s" % (
                "i2v_b", "%s videos: first, rest" % res.get("videos"), _fmt([first] if first else []),
                _fmt([rest] if rest else []), _ratio([rest] if rest else [], [first] if first else [])))
    # attn: the FP8 kernels' rates per length, the burst and (with --sustain) the sustained one.
    rates = {}
    for r in recs:
        res = r["result"]
        if r["suite"] != "attn" or "S" not in res:
            continue
        vgen = res.get("bench") == "attention_fp8"
        key = "fp8_kernel_tflops" if vgen else "fp8_tflops"
        for what, src in (("burst", res), ("sustained", res.get("sustained") or {})):
            if isinstance(src.get(key), (int, float)):
                rates.setdefault((res["S"], what), {"vgen": [], "peer": []})["vgen" if vgen else "peer"].append(src[key])
    for (n, what), v in sorted(rates.items()):
        lines.append("%-7s %-28s %-20s %-20s %s" % ("attn", "fp8 %d tokens %s" % (n, what), _fmt(v["vgen"]),
                                                    _fmt(v["peer"]), _ratio(v["vgen"], v["peer"])))
    lines += cosmos3_rows(recs)
    lines.append("(seconds; dit: per forward, a cfg mode's pair counted as two forwards; attn: TFLOP/s of the "
                 "kernel alone, the peer cuDNN's FP8 SDPA; i2v_b: the columns are vgen's first video and the "
                 "median of the rest; ratio of the means)")
    return lines


def read_records(path, invocation):
    recs = []
    if not os.path.exists(path):  # a call that recorded nothing (build only, every suite skipped)
        return recs
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("invocation") == invocation:
                recs.append(r)
    return recs


def selftest():
    env = {"GS_GPU": "NVIDIA H200", "GS_NGPU": "1", "VGEN_COMMIT": "abc1234", "GS_INVOCATION": "T", "GS_DRY": "0"}
    with tempfile.TemporaryDirectory() as d:
        bench = os.path.join(d, "b.jsonl")
        with open(bench, "w") as f:
            f.write('# text\n{"bench": "dit_forward", "impl": "vgen", "mode": "single", "height": 720, "seconds": 9.9}\n')
            f.write('{"bench": "dit_forward", "impl": "vgen", "mode": "cfg", "height": 720, "seconds": 10.3,'
                    ' "forwards_per_measurement": 2, "ranks": 2}\n')
        peer = os.path.join(d, "p.jsonl")
        with open(peer, "w") as f:
            f.write('{"bench": "dit_forward", "impl": "diffusers+torch-sdpa", "height": 720, "seconds": 11.7}\n'
                    '{"done": true}\n')
        recs = [json.loads(l) for l in emit("dit", "vgen", "a", "@" + bench, env)]
        recs += [json.loads(l) for l in emit("peer", "diffusers", "b", "@" + peer, env)]
        assert len(recs) == 3 and recs[0]["commit"] == "abc1234" and recs[0]["result"]["seconds"] == 9.9, recs
        with open(os.path.join(d, "load.json"), "w") as f:
            json.dump({"load_seconds": 4.0, "load": {"seconds": 3.75}, "videos": []}, f)
        assert vgen_timing(d, 1.0, 0, "warm")["load_seconds"] == 3.75
        timing = os.path.join(d, "timing.json")
        with open(timing, "w") as f:
            json.dump({"load_seconds": 4.0, "load": {"seconds": 3.5, "bytes_read": 40e9},
                       "videos": [{"status": "ok", "seconds": {"total": 20.0, "denoise": 15.0}}]}, f)
        t = vgen_timing(d, 30.0, 0, "warm")
        assert t["load_seconds"] == 3.5 and t["load_bytes_read"] == 40e9 and t["render_seconds"] == 20.0, t
        assert "error" in vgen_timing(os.path.join(d, "none"), 1.0, 2, "warm")
        recs += [json.loads(l) for l in emit("e2e", "vgen", "c", json.dumps(t), env)]
        p = peer_result('noise\n{"load_seconds": 50.0, "render_seconds": 30.0}\n{"done": true}\n', 90.0, 0, "warm")
        assert p["load_seconds"] == 50.0 and p["wall_seconds"] == 90.0, p
        recs += [json.loads(l) for l in emit("e2e", "diffusers", "d", json.dumps(p), env)]
        bad = peer_result("Traceback ...\n", 0.1, 1, "warm")
        recs += [json.loads(l) for l in emit("e2e", "diffusers", "d", json.dumps(bad), env)]
    c = ctest_summary("1/2 Test #3: a_gpu ......***Skipped   0.1 sec\n"
                      "96% tests passed, 1 tests failed out of 26\nThe following tests FAILED:\n"
                      "\t 12 - test_x_gpu (Failed)\n", 8)
    assert c == {"rc": 8, "failed_tests": ["test_x_gpu"], "skipped_tests": ["a_gpu"], "total": 26, "failed": 1,
                 "passed": 25}, c
    with tempfile.TemporaryDirectory() as d:
        attn = os.path.join(d, "a.jsonl")
        with open(attn, "w") as f:
            f.write('{"bench": "attention_fp8", "S": 16384, "fp8_kernel_tflops": 900.0,'
                    ' "sustained": {"fp8_kernel_tflops": 850.0}}\n')
        recs += [json.loads(l) for l in emit("attn", "vgen", "e", "@" + attn, env)]
        with open(attn, "w") as f:
            f.write('{"bench": "cudnn_fp8_attention", "S": 16384, "fp8_tflops": 1000.0,'
                    ' "sustained": {"fp8_tflops": 925.0}}\n')
        recs += [json.loads(l) for l in emit("attn", "cudnn", "f", "@" + attn, env)]
    text = "\n".join(table(recs))
    assert "fp8 16384 tokens burst" in text and "0.9000" in text, text  # 900 / 1000
    assert "fp8 16384 tokens sustained" in text and "0.9189" in text, text  # 850 / 925
    assert "720p single" in text and "0.8462" in text and "720p cfg" in text, text
    assert "0.0700" in text, text  # e2e load 3.5 / 50.0
    assert "0.3333" in text, text  # e2e wall 30 / 90: the failed peer process left out
    with tempfile.TemporaryDirectory() as d:  # the image-to-video suites
        with open(os.path.join(d, "timing.json"), "w") as f:
            vid = lambda i, tot: {"index": i, "status": "ok", "seconds": {
                "text_encode": 0.2, "image_encode": 0.1, "vae_encode": 0.3, "denoise": tot - 1.5, "vae_decode": 0.6,
                "mp4_encode": 0.3, "total": tot}}
            json.dump({"load": {"seconds": 5.0}, "videos": [vid(0, 10.0), vid(1, 9.0), vid(2, 9.5), vid(3, 8.0)]}, f)
        rows = vgen_videos(d, 50.0, 0)
        summ = rows[-1]
        assert len(rows) == 5 and rows[0]["image_encode_seconds"] == 0.1 and rows[1]["video"] == 1, rows
        assert summ["first_seconds"] == 10.0 and summ["rest_median_seconds"] == 9.0, summ
        assert abs(summ["rest_over_first_without_output"] - 8.7 / 9.7) < 1e-9 and summ["load_seconds"] == 5.0, summ
        assert summ["vae_encode_median_seconds"] == 0.3 and summ["videos_ok"] == 4, summ
        assert vgen_videos(os.path.join(d, "none"), 1.0, 3)[0]["summary"] is True
        with open(os.path.join(d, "r.jsonl"), "w") as f:
            f.write("\n".join(json.dumps(r) for r in rows) + "\n")
        recs += [json.loads(l) for l in emit("i2v_batch", "vgen", "g", "@" + os.path.join(d, "r.jsonl"), env)]
        ti = vgen_timing(d, 20.0, 0, "warm")
        assert ti["render_seconds_without_output"] == 9.7 and ti["vae_encode_seconds"] == 0.3, ti
        recs += [json.loads(l) for l in emit("ti2v", "vgen", "h", json.dumps(ti), env)]
        recs += [json.loads(l) for l in emit("ti2v", "diffusers", "i", json.dumps(
            {"load_seconds": 10.0, "render_seconds": 19.4, "wall_seconds": 40.0, "rc": 0}), env)]
        for suite, impl, res in (
                ("dit_i2v", "vgen", {"bench": "dit_forward", "height": 720, "seconds": 10.2}),
                ("peer_i2v", "diffusers", {"bench": "dit_forward", "height": 720, "seconds": 12.0}),
                ("vae22", "vgen", {"bench": "vae_decode", "height": 704, "seconds": 3.0, "peak_gib": 9.0}),
                ("peer_i2v", "diffusers", {"bench": "vae_decode", "height": 704, "seconds": 7.5, "peak_mem_gib": 12.0})):
            recs += [json.loads(l) for l in emit(suite, impl, "j", json.dumps(res), env)]
    text = "\n".join(table(recs))
    assert "dit_i2v 720p single" in text and "0.8500" in text, text  # 10.2 / 12.0
    assert "vae22   704p single" in text and "0.4000" in text and "704p peak GiB" in text and "0.7500" in text, text
    assert "render (no output write)" in text and "0.5000" in text, text  # 9.7 / 19.4
    assert "load + render" in text and "0.5102" in text, text  # (5 + 10) / (10 + 19.4)
    assert "4 videos: first, rest" in text and "0.9000" in text, text  # 9.0 / 10.0
    recs += selftest_cosmos3(env)
    text = "\n".join(table(recs))
    assert "720p 12L CFG step bf16" in text and "0.5000" in text, text  # 6.0 / 12.0
    assert "720p 12L CFG step fp8" in text and "0.4000" in text, text  # 4.8 / 12.0: the peer's bf16
    assert "720p prefill/DiT bf16" in text and "0.004" in text, text
    assert "render_seconds" in text and "0.6250" in text and "first_step_excess_share" in text, text  # 250 / 400
    dry = emit("tests", "vgen", "x", "@/nonexistent", dict(env, GS_DRY="1"))
    assert len(dry) == 1 and json.loads(dry[0])["dry_run"] is True
    print("gpu_suite_records selftest: OK")


def selftest_cosmos3(env):
    """Made-up Cosmos 3 records: the benches' lines and a vgen render's timing.json."""
    recs = []
    for impl, res in (("vgen", {"bench": "cosmos3_dit", "height": 720, "layers": 12, "precision": "bf16", "seconds": 6.0,
                                "prefill_share_of_dit": 0.0041}),
                      ("vgen", {"bench": "cosmos3_dit", "height": 720, "layers": 12, "precision": "fp8", "seconds": 4.8}),
                      ("diffusers", {"bench": "cosmos3_dit", "height": 720, "layers": 12, "seconds": 12.0})):
        recs += [json.loads(l) for l in emit("cosmos3", impl, "k", json.dumps(res), env)]
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "timing.json"), "w") as f:
            json.dump({"load": {"seconds": 20.0}, "videos": [{"status": "ok", "seconds": {
                "steps": [7.0, 6.0, 6.2, 5.8], "denoise": 25.0, "vae_decode": 20.0, "total": 250.0}}]}, f)
        t = cosmos3_timing(d, 300.0, 0)
        assert t["step_seconds"] == 6.0 and t["first_step_excess_seconds"] == 1.0 and t["steps_run"] == 4, t
        assert abs(t["first_step_excess_share"] - 0.004) < 1e-12 and t["load_seconds"] == 20.0, t
        assert "step_seconds" not in cosmos3_timing(os.path.join(d, "none"), 1.0, 2)
    recs += [json.loads(l) for l in emit("cosmos3_e2e", "vgen", "l", json.dumps(t), env)]
    recs += [json.loads(l) for l in emit("cosmos3_e2e", "diffusers", "m", json.dumps(
        {"load_seconds": 40.0, "render_seconds": 400.0, "step_seconds": 10.0, "rc": 0}), env)]
    return recs


def main(argv):
    if not argv:
        print(__doc__)
        return 2
    cmd, a = argv[0], argv[1:]
    if cmd == "emit":
        print("\n".join(emit(*a)))
    elif cmd == "ctest":
        with open(a[0], errors="replace") as f:
            print(json.dumps(ctest_summary(f.read(), int(a[1]))))
    elif cmd == "vgen-timing":
        print(json.dumps(vgen_timing(a[0], float(a[1]), int(a[2]), a[3])))
    elif cmd == "cosmos3-timing":
        print(json.dumps(cosmos3_timing(a[0], float(a[1]), int(a[2]))))
    elif cmd == "vgen-videos":
        print("\n".join(json.dumps(r) for r in vgen_videos(a[0], float(a[1]), int(a[2]))))
    elif cmd == "peer-result":
        try:
            with open(a[0], errors="replace") as f:
                text = f.read()
        except OSError:
            text = ""
        print(json.dumps(peer_result(text, float(a[1]), int(a[2]), a[3])))
    elif cmd == "since":
        print(round(float(a[1]) - float(a[0]), 3))
    elif cmd == "table":
        print("\n".join(table(read_records(a[0], a[1]))))
    elif cmd == "selftest":
        selftest()
    else:
        print("gpu_suite_records: unknown command %s" % cmd, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
