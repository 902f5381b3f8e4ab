"""Helpers of the e2e drivers' Python checks (import with sys.path holding this folder, E2E_DIR): a
saved video's latents (output.save_tensors) and a report entry's stem."""
import array, json, os, struct


def latents(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
        t = h["latents"]
        f.seek(8 + n + t["data_offsets"][0])
        a = array.array("f")
        a.frombytes(f.read(t["data_offsets"][1] - t["data_offsets"][0]))
        return a


def stem(video):
    return os.path.splitext(os.path.basename(video["output"]))[0]
