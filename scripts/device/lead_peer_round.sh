# Sourced by lead_run34.sh / lead_run35.sh: vg (vgen DiT forward, 40 layers, warm-up 1, median of 3)
# and pe (the diffusers peer, timed the same way) on GPU 0, results appended to $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/diffusers-*.whl > /dev/null 2>&1
D=$(find $B -name vgen_dit_bench -type f | head -1)
export CUDA_VISIBLE_DEVICES=0
vg() { timeout 110 $D --shapes $1 --layers 40 --reps 3 --warmup 1 --no-profile --tag "$2" --out "$OUT/vgen_dit.jsonl" > "$OUT/v.log" 2>&1; el "vgen $1 $2 rc=$?"; grep "^#.*tokens" "$OUT/v.log"; }
pe() { PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 150 python3 scripts/bench/peer/diffusers_wan_bench.py "$@" >> "$OUT/peer.jsonl" 2> "$OUT/peer.err"; el "peer $* rc=$?"; tail -n $# "$OUT/peer.jsonl" | cut -c1-150; }
