#!/usr/bin/env bash
# plot_scaling.py on known measurements: the speedups it prints and the SVG it writes (issue 9's
# table must be right before the 4- and 8-GPU runs feed it). Usage: plot_scaling_check.sh REPO_ROOT
set -euo pipefail
root=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/dit.jsonl" <<'J'
{"bench":"dit_forward","height":720,"layers":40,"mode":"single","ranks":1,"seconds":20.0,"tag":"scaling"}
{"bench":"dit_forward","height":720,"layers":40,"mode":"cfg2-ulysses4","ranks":8,"seconds":2.5,"tag":"scaling"}
{"bench":"dit_forward","height":720,"layers":40,"mode":"ulysses2","ranks":2,"seconds":10.0,"tag":"other"}
{"bench":"dit_forward","height":720,"layers":40,"mode":"ulysses8","ranks":8,"seconds":4.0,"tag":"scaling"}
{"bench":"dit_forward","height":720,"layers":40,"mode":"ulysses8","ranks":8,"seconds":3.2,"tag":"scaling"}
{"bench":"dit_forward","height":720,"layers":2,"mode":"single","ranks":1,"seconds":1.0,"tag":"scaling"}
{"bench":"dit_forward","height":720,"layers":2,"mode":"cfg2-ulysses4","ranks":8,"seconds":0.5,"tag":"scaling"}
{"bench":"dit_forward","height":480,"layers":40,"mode":"single","ranks":1,"seconds":5.0,"tag":"scaling"}
{"bench":"dit_forward","height":480,"layers":40,"mode":"ring2","ranks":2,"seconds":2.0,"tag":"scaling"}
{"bench":"dit_forward","height":480,"layers":40,"mode":"ulysses4","ranks":4,"seconds":2.0,"tag":"scaling"}
J
cat > "$dir/vae.jsonl" <<'J'
{"bench":"vae_decode","height":720,"parallel_vae_size":1,"seconds":2.0,"tag":"scaling"}
{"bench":"vae_decode","height":720,"parallel_vae_size":8,"seconds":0.5,"tag":"scaling"}
J
out=$("${PYTHON:-python3}" "$root/scripts/bench/plot_scaling.py" "$dir/dit.jsonl" "$dir/vae.jsonl" "$dir/s.svg")
echo "$out"
fail() { echo "FAIL: $*"; exit 1; }
grep -Eq "cfg2-ulysses4 +8 +2.500 +8.00x +>= 7.0" <<<"$out" || fail "cfg2-ulysses4 speedup row"
grep -Eq "ulysses8 +8 +3.200 +6.25x" <<<"$out" || fail "the later ulysses8 measurement replaces the earlier one"
grep -q "ulysses2" <<<"$out" && fail "a line without the scaling tag was used"
grep -Eq "VAE decode, parallel 8 +8 +0.500 +4.00x +>= 3.3" <<<"$out" || fail "VAE row"
# The 2-layer smoke lines form their own panel and never set the 40-layer baseline or target.
grep -Eq "cfg2-ulysses4 +8 +0.500 +2.00x +-" <<<"$out" || fail "2-layer lines kept apart"
grep -Eq "ring2 +2 +2.000 +2.50x" <<<"$out" || fail "480p against its own baseline"
svg=$(cat "$dir/s.svg")
for want in "<svg" "cfg2-ulysses4 8.00x" "cfg2-ulysses4 2.00x" "(2 layers)" "DiT 480p" "ring2 2.50x" "ulysses4 2.50x" \
            "VAE decode" "720p 4.00x"; do
  grep -qF "$want" <<<"$svg" || fail "SVG lacks '$want'"
done
grep -qF "single 1.00x" <<<"$svg" && fail "the baseline is plotted as a point"
[ "$(grep -c '<rect' <<<"$svg")" = 4 ] || fail "4 panels (720p 40 layers, 720p 2 layers, 480p, VAE)"
echo "PASS"
