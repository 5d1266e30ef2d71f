#!/usr/bin/env bash
# One call on the GPU machine: how fast can whole calls move data through the CUDA backend's
# pinned staging? The link and host memcpy bandwidths (1..32 threads), then in-memory whole calls
# (reconstruction 8192^2, exact EDT 8192^2 and 65536^2, a 1/8 budget at 32768^2) under several
# staging settings "threads,chunk,buffers" (tiles_bench --stage), each checked against the default.
#   bash bench/stage_probe.sh            (build dir build-stage/, log in $OUT or build-stage-out/)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build-stage-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/stage.log") 2>&1
START=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - START )) s] $*"; }
nvidia-smi -L; nproc; free -g | head -2
B=$ROOT/build-stage
stamp configure
cmake -S "$ROOT" -B "$B" -DCMAKE_BUILD_TYPE=Release -DIWPP_ENABLE_JAVA=OFF -DIWPP_ENABLE_OPENCL=OFF \
  -DIWPP_BUILD_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 2>&1 | grep -E "IWPP|Error"
stamp build
cmake --build "$B" -j16 --target tiles_bench 2>&1 | grep -E "warning|error" | head -20
T=$B/bench/tiles_bench
STAGES=${STAGES:-"8,8M,2;16,8M,2;16,4M,3;16,16M,3;16,32M,4;12,16M,3"}
stamp "8192: reconstruction and EDT"
timeout 120 stdbuf -oL "$T" --backend cuda --sizes 8192 --edt --reps 7 --stage "$STAGES"
stamp "32768: reconstruction, budget 880M (1/8), gpu*2 / gpu*3"
timeout 150 stdbuf -oL "$T" --backend cuda --no-bandwidth --sizes 32768 --limits 880M --workers "gpu*3" --wlimit 880M \
  --reps 3 --stage "16,16M,3"
stamp "32768 again, every run with staging 16,16M,3"
IWPP_CUDA_STAGE_THREADS=16 IWPP_CUDA_STAGE_CHUNK=16M IWPP_CUDA_STAGE_BUFS=3 timeout 150 stdbuf -oL "$T" --backend cuda \
  --no-bandwidth --sizes 32768 --limits 880M --workers "gpu*2;gpu*3" --wlimit 880M --reps 3
stamp "65536: exact EDT in memory"
timeout 200 stdbuf -oL "$T" --backend cuda --no-bandwidth --sizes 65536 --edt-only --reps 2 --stage "16,16M,3;16,32M,4"
stamp done
