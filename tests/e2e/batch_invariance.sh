#!/usr/bin/env bash
# A prompt's result does not depend on its neighbours (CPU, fp32, one BLAS): each prompt rendered
# alone (text cache off) against the same prompts rendered in one batch with the text cache off,
# cold (a negative prompt already cached, so the prompt is encoded by itself), warm (every
# embedding a hit), and on 2 data-parallel replicas (mpirun -np 2). The saved tensors
# (output.save_tensors: final latents and float frames) must be byte-identical.
# Usage: batch_invariance.sh <vgen> <source dir>
set -u
VGEN=$1; SRC=$2
source "$(dirname "${BASH_SOURCE[0]}")/e2e_common.sh" invariance

# Token counts from 1 to the 16 of max_sequence_length (truncated), two negative prompts: the
# pairs the encoder sees differ in length from every prompt, and from one another.
cat > "$W/p.jsonl" <<'EOF'
{"prompt": "a red cube", "seed": 11, "name": "cube"}
{"prompt": "a small blue sphere rolls slowly over a wooden table, soft light", "seed": 12, "name": "sphere"}
{"prompt": "x", "seed": 13, "name": "x", "negative_prompt": "blurry, low quality"}
{"prompt": "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen", "seed": 14, "name": "long"}
{"prompt": "a green cone", "seed": 15, "name": "cone", "negative_prompt": "blurry, low quality"}
EOF
common=(--recipe "$SRC/recipes/demo-cpu.yaml" --set model="$SRC/tests/golden/wan21-tiny"
        --set generation.height=16 --set generation.width=16 --set generation.num_frames=5
        --set generation.num_inference_steps=2 --set generation.max_sequence_length=16
        --set parallel_config.cfg_size=1 --set parallel_config.ulysses_size=1
        --set output.save_tensors=true --set output.skip_existing=false)
render() {  # name np prompts sets...
  local name=$1 np=$2 prompts=$3; shift 3
  timeout 300 "$MPIRUN" -np "$np" --oversubscribe "$VGEN" run "${common[@]}" --prompts "$prompts" "$@" \
    --out "$W/$name" < /dev/null > "$W/log_$name" 2>&1 || { tail -20 "$W/log_$name"; fail "$name exited non-zero"; }
}

# Alone: one run per prompt, its line as the whole prompt file.
i=0
while IFS= read -r line; do
  printf '%s\n' "$line" > "$W/one_$i.jsonl"
  render "alone_$i" 1 "$W/one_$i.jsonl"
  i=$((i + 1))
done < "$W/p.jsonl"
render batch 1 "$W/p.jsonl"
render cold 1 "$W/p.jsonl" --set text.cache_embeddings=true --set text.cache_dir="$W/cache"
render warm 1 "$W/p.jsonl" --set text.cache_embeddings=true --set text.cache_dir="$W/cache"
render dp2 2 "$W/p.jsonl" --set parallel_config.dp_size=2 --set text.cache_embeddings=true \
  --set text.cache_dir="$W/cache_dp"
n_cache=$(ls "$W/cache" | grep -c '\.safetensors$')
[ "$n_cache" -eq 7 ] || fail "the text cache holds $n_cache entries, expected 7 (5 prompts, 2 negative prompts)"

checked=0
for name in cube sphere x long cone; do
  ref=$(ls "$W"/alone_*/*-"$name".safetensors 2>/dev/null)
  [ -n "$ref" ] && [ "$(echo "$ref" | wc -l)" -eq 1 ] || fail "no single alone render of '$name'"
  for run in batch cold warm dp2; do
    got=$(ls "$W/$run"/*-"$name".safetensors 2>/dev/null)
    [ -n "$got" ] || fail "$run: no tensors of '$name'"
    cmp -s "$ref" "$got" || fail "$run: '$name' differs from its render alone ($(cmp "$ref" "$got" 2>&1 | head -1))"
    checked=$((checked + 1))
  done
done
[ "$checked" -eq 20 ] || fail "compared $checked renders, expected 20"
echo "batch invariance: 5 prompts byte-identical alone, in a batch, with a cold and a warm text cache, on dp 2"
