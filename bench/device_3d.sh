#!/usr/bin/env bash
# One call on the GPU machine: build iwpp_bench (CUDA sm_90, no tests, no Java), then the 3D
# benchmarks of the CUDA issue at 256^3 and 512^3: reconstruction by dilation (6- and
# 26-connected, every CUDA queue variant), exact EDT and Danielsson EDT, CPU (1 and all cores)
# against CUDA in the same run, every result checked against the sequential CPU. Logs and CSV
# files go to $OUT.
#   bash bench/device_3d.sh
# Time (estimated from a CUDA-only trial on the H100 machine and the CPU at 256^3): build about
# 30 s, 256^3 under a minute, 512^3 three to four minutes. The sequential CPU runs dominate
# (512^3: reconstruction 4.5 s with 6 and 9.9 s with 26 neighbours, exact EDT 4.5 s, Danielsson
# about 35 s), so each case stops repeating after IWPP_3D_BUDGET seconds (default 10).
# Knobs: IWPP_3D_SIZES (default "256^3 512^3", one bench process each), IWPP_3D_VARIANTS
# (default ml,pf,atomic,mp), IWPP_3D_REPS (default 3), IWPP_3D_BUDGET (default 10).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build-3d-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/device_3d.log") 2>&1
START=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - START )) s] $*"; }
SIZES=${IWPP_3D_SIZES:-"256^3 512^3"}
VARIANTS=${IWPP_3D_VARIANTS:-ml,pf,atomic,mp}
REPS=${IWPP_3D_REPS:-3}
BUDGET=${IWPP_3D_BUDGET:-10}
THREADS=$(nproc)
nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"
nvidia-smi --query-gpu=memory.total,memory.used --format=csv 2>/dev/null || true
echo "cores: $THREADS"; free -g | head -2

# IWPP_3D_BUILD=DIR reuses an existing build (e.g. build-final of final_device.sh on a warm machine)
B=${IWPP_3D_BUILD:-$ROOT/build-dev-3d}
if [ ! -f "$B/CMakeCache.txt" ]; then
  stamp configure
  cmake -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=Release -DIWPP_ENABLE_JAVA=OFF -DIWPP_BUILD_TESTS=OFF \
    -DCMAKE_CUDA_ARCHITECTURES=90 2>&1 | grep -E "IWPP|Error"
fi
stamp "build iwpp_bench"
cmake --build "$B" -j16 --target iwpp_bench 2>&1 | grep -E "warning|error" | head -20
BENCH=$B/bench/iwpp_bench
[ -x "$BENCH" ] || { echo "iwpp_bench was not built"; exit 1; }

rc=0
for s in $SIZES; do
  tag=${s/^3/cube}
  stamp "bench $s: rec-dil (6, 26), edt-exact, edt-dan; cpu t1/t$THREADS, cuda $VARIANTS"
  # stdout line-buffered so that a run stopped by the timeout still leaves its rows in the log
  timeout 420 stdbuf -oL "$BENCH" --sizes "$s" --ops rec-dil,edt-exact,edt-dan --conn 6,26 \
    --backends cpu,cuda --threads "1,$THREADS" --variants "$VARIANTS" --reps "$REPS" --budget "$BUDGET" \
    --csv "$OUT/bench_3d_$tag.csv"
  r=$?
  echo "iwpp_bench $s: exit status $r"
  [ $r -ne 0 ] && rc=$r
  nvidia-smi --query-gpu=memory.used --format=csv,noheader 2>/dev/null || true
done
stamp "done (exit status $rc)"
exit $rc
