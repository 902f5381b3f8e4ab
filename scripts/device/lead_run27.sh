#!/usr/bin/env bash
# Device run 27 (lead, one H200): cuDNN 9.19 (the Python environment's) against the system 9.14.
# cudnn-frontend sends an SDPA with a padding mask to cuDNN's UNIFIED engine from 9.15 on (COMPOSITE
# before). Is one 75,648-key call masked to 75,600 keys as fast as the unmasked aligned call there?
# Also: host_enqueue_seconds of the 720p forward, and the GPU idle time between kernels (nsys).
set -uo pipefail
source "$(dirname "$0")/lead_env.sh"
PIPC=$(python3 -c "import nvidia.cudnn as m; print(list(m.__path__)[0])" 2>/dev/null)
echo "pip cudnn: $PIPC"; ls "$PIPC" "$PIPC/lib" | tr '\n' ' '; echo; grep -h "define CUDNN_M\|define CUDNN_PATCH" "$PIPC"/include/cudnn_version*.h
B2=build-gpu919
CUDNN_ROOT=$PIPC VGEN_GPU_BUILD=$ROOT/$B2 bash scripts/device/gpu_check.sh --configure-only > "$OUT/configure919.log" 2>&1
grep -h "vgen: cuDNN" "$OUT"/configure*.log $B/CMakeFiles/CMakeOutput.log 2>/dev/null | head; grep -h "CUDNN_LIBRARY:\|CUDNN_INCLUDE_DIR:" $B/CMakeCache.txt $B2/CMakeCache.txt
(cmake --build $B -j 8 --target attention_bench vgen_dit_bench > "$OUT/build.log" 2>&1; echo "build914 rc=$?" >> "$OUT/rc") &
(cmake --build $B2 -j 8 --target attention_bench > "$OUT/build919.log" 2>&1; echo "build919 rc=$?" >> "$OUT/rc") &
wait; el "$(cat $OUT/rc | tr '\n' ' ')"; grep -hE " error" "$OUT"/build*.log | head -5
A1=$(find $B -name attention_bench -type f | head -1); A2=$(find $B2 -name attention_bench -type f | head -1)
ab1() { echo "== 9.14 $*"; timeout 90 $A1 --cudnn-only "$@" 2>&1 | grep -o '"Skv":.*"tflops":[0-9.]*\|cudnn_version[^,]*' | sed 's/"H":40,"D":128,"dtype":"bf16",//'; }
ab2() { echo "== 9.19 $*"; LD_LIBRARY_PATH=$PIPC/lib:$LD_LIBRARY_PATH timeout 90 $A2 --cudnn-only "$@" 2>&1 | grep -o '"Skv":.*"tflops":[0-9.]*\|cudnn_version[^,]*' | sed 's/"H":40,"D":128,"dtype":"bf16",//'; }
LD_LIBRARY_PATH=$PIPC/lib:$LD_LIBRARY_PATH CUDNN_FRONTEND_LOG_INFO=1 CUDNN_FRONTEND_LOG_FILE=$OUT/fe919.log timeout 60 $A2 --cudnn-only --kv 75648 --valid 75600 --lse-seq 0 75600 > /dev/null 2>&1
CUDNN_FRONTEND_LOG_INFO=1 CUDNN_FRONTEND_LOG_FILE=$OUT/fe914.log timeout 60 $A1 --cudnn-only --kv 75648 --valid 75600 --lse-seq 0 75600 > /dev/null 2>&1
grep -h "implementation" "$OUT"/fe91*.log | sort | uniq -c | head
ab2 --kv 75648 --valid 75600 --lse-seq 0110 75600; ab2 --kv 75520 --lse-seq 1001 75600; ab2 --kv 75648 --lse-seq 0110 75600
ab2 --kv 75648 --valid 75600 --lse-seq 0110 75600; ab2 --lse-seq 01 75600
ab1 --kv 75648 --valid 75600 --lse-seq 01 75600; ab1 --kv 75520 --lse-seq 1 75600
el "attention"
D=$(find $B -name vgen_dit_bench -type f | head -1)
timeout 100 $D --shapes 720p --layers 10 --reps 3 --warmup 1 --no-profile --tag enq --out "$OUT/dit.jsonl" > "$OUT/d.log" 2>&1; el "dit rc=$?"
grep -o '"seconds":[0-9.]*\|"host_enqueue_seconds":[0-9.]*' "$OUT/dit.jsonl" | paste -sd' '
if command -v nsys > /dev/null; then
  timeout 150 nsys profile -t cuda -o "$OUT/dit4" --force-overwrite true $D --shapes 720p --layers 4 --reps 1 --warmup 1 --no-profile --out /tmp/x.jsonl > "$OUT/nsys.log" 2>&1; el "nsys rc=$?"
  nsys stats -q --report cuda_gpu_trace --format csv -o "$OUT/trace" "$OUT/dit4.nsys-rep" > /dev/null 2>&1
  python3 - "$OUT"/trace*.csv <<'PY'
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
ks=sorted((int(r['Start (ns)']),int(r['Duration (ns)']),r['Name']) for r in rows)
# the last forward: from the last 'patchify' kernel on
idx=[i for i,k in enumerate(ks) if 'patchify' in k[2].lower()]
s=ks[idx[-1]:] if idx else ks
gaps=[(s[i+1][0]-(s[i][0]+s[i][1]),s[i][2][:40],s[i+1][2][:40]) for i in range(len(s)-1)]
tot=s[-1][0]+s[-1][1]-s[0][0]; g=sum(max(0,x[0]) for x in gaps)
print("kernels %d span %.3f ms busy-gap %.3f ms (%.2f%%)"%(len(s),tot/1e6,g/1e6,100*g/tot))
for x in sorted(gaps,reverse=True)[:8]: print("gap %.1f us after %s before %s"%(x[0]/1e3,x[1],x[2]))
PY
else echo "no nsys"; fi
rm -f "$OUT"/*.nsys-rep "$OUT"/*.sqlite; cd "$OUT" && tar czf logs.tgz *.log 2>/dev/null && rm -f *.log
