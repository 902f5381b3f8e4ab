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
        s = v.get("seconds", {})
        r.update(status=v.get("status"), render_seconds=s.get("total"), text_encode_seconds=s.get("text_encode"),
                 denoise_seconds=s.get("denoise"), vae_decode_seconds=s.get("vae_decode"),
                 mp4_encode_seconds=s.get("mp4_encode"), peak_memory_bytes=v.get("peak_memory_bytes"),
                 frames=v.get("frames"), height=v.get("height"), width=v.get("width"))
    return r


def peer_result(text, wall, rc, cache):
    rows = []
    for l in text.splitlines():
        if l.startswith("{"):
            try:
                rows.append(json.loads(l))
            except ValueError:
                pass
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
    for bench, suites in (("dit_forward", ("dit", "peer", "scaling")), ("vae_decode", ("vae", "peer", "scaling"))):
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
                bench.split("_")[0], "%sp %s" % (h, mode), _fmt(v.get("vgen")), _fmt(v.get("diffusers")),
                _ratio(v.get("vgen"), v.get("diffusers")) if mode == "single" else "-"))
    for suite, keys in (("load", ("load_seconds", "wall_seconds")),
                        ("e2e", ("load_seconds", "render_seconds", "wall_seconds"))):
        for k in keys:
            # A failed process counts nowhere (its wall time would look like a fast one).
            v = {imp: [r["result"][k] for r in recs if r["suite"] == suite and r["impl"] == imp
                       and r["result"].get("rc", 0) == 0 and "error" not in r["result"]
                       and isinstance(r["result"].get(k), (int, float))] for imp in ("vgen", "diffusers")}
            if v["vgen"] or v["diffusers"]:
                lines.append("%-7s %-28s %-20s %-20s %s" % (suite, k, _fmt(v["vgen"]), _fmt(v["diffusers"]),
                                                            _ratio(v["vgen"], v["diffusers"])))
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
    lines.append("(seconds; dit: per forward, a cfg mode's pair counted as two forwards; attn: TFLOP/s of the "
                 "kernel alone, the peer cuDNN's FP8 SDPA; ratio of the means)")
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
        p = peer_result('noise\n{"load_seconds": 50.0, "render_seconds": 30.0}\n', 90.0, 0, "warm")
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
    dry = emit("tests", "vgen", "x", "@/nonexistent", dict(env, GS_DRY="1"))
    assert len(dry) == 1 and json.loads(dry[0])["dry_run"] is True
    print("gpu_suite_records selftest: OK")


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
