#!/usr/bin/env bash
# One call on the GPU machine for the tile scheduler: build (CUDA sm_90, OpenCL, tests), the
# tile, signal and reconstruction tests on CUDA and NVIDIA OpenCL, then tiles_bench: whole calls
# from host memory, in memory, with budgets (tiles forced) and with several workers.
#   bash bench/tiles_device.sh [test|bench|edt|strips|families|queue|gpus|all]    (needs .device/ carried for CMocka)
# edt: the tile and EDT tests, then the exact EDT benches only.
# families: the tile tests, then the reconstruction's worst inputs for tiles (a seed in the last
# corner, a spiral corridor) at 1/8 budgets, each with long re-runs handed to full runs (the
# default) and without (IWPP_TILES_RERUN_POPS=off), alternating.
# queue: the reconstruction tests on CUDA and NVIDIA OpenCL, then the queue's imbalance rule
# (cuda.queue_* / ocl.queue_*: blocks leave, the host finishes long chains) on both backends, in
# memory: a corner flood and a spiral, the rule off and on, alternating; tissue as the control.
# strips: the tile and EDT tests, then the exact EDT by strips at 1/8 and 1/4 (8192^2) and 1/8
# (16384^2), the default staging (worker contexts 4 MiB, the caller's 16) against every worker at
# 4 MiB and every worker at 16 MiB, alternating three times (session 22: the mix is unmeasured).
# gpus (a machine with two or more GPUs: run with kind nvidia-h100-x2): one GPU's workers against
# every GPU's (all-gpus), 32768^2 reconstruction (no budget and 880M), 65536^2 exact EDT by strips
# (5G), 98304^2 reconstruction (16G); no tests (the bench checks every result bit for bit).
# TILES_TESTS: the ctest regex instead of the phase's own. Sizes: TILES_SIZES (default 8192,32768), TILES_BIG (default 98304, "" to skip).
set -u
PHASE=${1:-all}
LOG_NAME=tiles
. "$(dirname "$0")/device_env.sh"
nvidia-smi -L; nproc; free -g | head -2
B=$ROOT/build-tiles
device_configure "$B"
stamp build
cmake --build "$B" -j16 2>&1 | grep -E "warning|error" | head -20
if [ "$PHASE" = gpus ]; then
  nvidia-smi -L
  T="$B/bench/tiles_bench --backend cuda --no-bandwidth"
  stamp "32768 reconstruction: in memory; one GPU's workers vs every GPU's, no budget and 880M"
  timeout 110 stdbuf -oL $T --sizes 32768 --reps 3 --workers "gpu*3;all-gpus*3;gpu*3,cpu*4;all-gpus*3,cpu*4"
  timeout 110 stdbuf -oL $T --sizes 32768 --reps 3 --wlimit 880M --workers "gpu*3,cpu*4;all-gpus*3,cpu*4" | grep -E "workers|per worker"
  stamp "65536 exact EDT: in memory; strips at 5G, one GPU vs every GPU"
  timeout 130 stdbuf -oL $T --sizes 65536 --edt-only --reps 2 --wlimit 5G --workers "gpu*3;all-gpus*3"
  stamp "98304 reconstruction, 16G budget: one GPU vs every GPU"
  timeout 200 stdbuf -oL $T --sizes 98304 --reps 1 --wlimit 16G --workers "gpu*3,cpu*4;all-gpus*3,cpu*4"
  stamp done; exit 0
fi
if [ "$PHASE" != bench ]; then
  stamp "ctest: tiles, signals, reconstruction, composed, EDT, errors on cuda and opencl"
  TESTS="tiles|signals|reconstruct|fill|extrema|open_close|edt|errors|badinput"
  [ "$PHASE" = edt ] && TESTS="tiles|edt"
  [ "$PHASE" = strips ] && TESTS="tiles|edt|budget"
  [ "$PHASE" = families ] && TESTS="tiles"
  [ "$PHASE" = queue ] && TESTS="reconstruct|fill|extrema|open_close"
  TESTS=${TILES_TESTS:-$TESTS}
  (cd "$B" && timeout 300 ctest -j8 --output-on-failure -R "$TESTS" -E cross_ 2>&1 | tail -40)
fi
[ "$PHASE" = test ] && { stamp done; exit 0; }
if [ "$PHASE" = edt ]; then
  # the exact EDT beyond the budget (strips): 1/8 and 1/4 of its working set as measured in
  # session 20 (the device memory an in-memory call kept, printed by tiles_bench: 742 MB at
  # 8192^2, 2870 MB at 16384^2, 10242 MB at 32768^2, 37890 MB at 65536^2), and less
  stamp "tiles_bench cuda exact EDT, budgets 1/8 and 1/4 of the measured working set"
  timeout 100 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes 8192 --limits 92M,185M,64M --edt-only --reps 5 --no-bandwidth
  timeout 100 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes 16384 --limits 358M --edt-only --reps 3 --no-bandwidth
  timeout 200 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes 32768 --limits 1280M,2560M --edt-only --reps 3 --no-bandwidth
  stamp "tiles_bench opencl exact EDT 8192, 1/8 and 1/4"
  timeout 100 stdbuf -oL "$B/bench/tiles_bench" --backend opencl --sizes 8192 --limits 92M,185M --edt-only --reps 3 --no-bandwidth
  stamp "tiles_bench cuda 65536 exact EDT, 1/8 (5G)"
  timeout 250 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes 65536 --limits 5G --edt-only --reps 2 --no-bandwidth
  stamp done; exit 0
fi
if [ "$PHASE" = strips ]; then
  for i in 1 2 3; do
    for v in default 4M 16M; do
      stamp "exact EDT by strips, cuda.stage_chunk: $v (default: worker contexts 4M, the caller's 16M)"
      c=; [ "$v" != default ] && c=$v
      IWPP_CUDA_STAGE_CHUNK=$c timeout 60 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes 8192 \
        --limits 92M,185M --edt-only --reps 7 --no-bandwidth | grep -E "in memory|92M|185M"
      IWPP_CUDA_STAGE_CHUNK=$c timeout 60 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes 16384 \
        --limits 358M --edt-only --reps 3 --no-bandwidth | grep -E "in memory|358M"
    done
  done
  stamp done; exit 0
fi
if [ "$PHASE" = queue ]; then
  for be in cuda opencl; do
    K=$(echo "$be" | sed 's/opencl/OCL/;s/cuda/CUDA/')
    for rule in default off default; do
      stamp "$be in memory, queue rule: $rule (corner 4096, 8192; spiral 1024, 2048; tissue 8192)"
      v=; [ "$rule" = off ] && v=off
      for c in "4096 corner 14M" "8192 corner 56M" "1024 spiral 256K" "2048 spiral 1M" "8192 tissue 56M"; do
        set -- $c
        env "IWPP_${K}_QUEUE_LEAVE=$v" "IWPP_${K}_QUEUE_HOST=$v" timeout 60 stdbuf -oL "$B/bench/tiles_bench" \
          --backend "$be" --sizes "$1" --limits "$3" --marker "$2" --reps 2 --no-bandwidth | grep -E "in memory|budget"
      done
    done
  done
  stamp done; exit 0
fi
if [ "$PHASE" = families ]; then
  # (without the hand-over a corner flood is host pops over the whole image, seconds a call:
  # 8192^2 once only)
  for m in corner spiral tissue; do
    for rule in default off default off; do
      stamp "tiles_bench cuda --marker $m, 8192^2 with 56M (1/8), long re-runs: $rule"
      v=; reps=3; [ "$rule" = off ] && v=off && reps=1
      IWPP_TILES_RERUN_POPS=$v timeout 150 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes 8192 --limits 56M \
        --marker "$m" --reps $reps --no-bandwidth
    done
    stamp "tiles_bench cuda --marker $m, 16384^2 with 220M (1/8)"
    timeout 150 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes 16384 --limits 220M --marker "$m" --reps 3 \
      --no-bandwidth
  done
  stamp done; exit 0
fi
# budgets: 1/8 of the in-memory working set as estimated before session 19 (2 images + 4.5 B/px
# of queues: 56M, 220M, 880M) and 1/8 of what an in-memory call keeps on the device, measured
# (tiles_bench prints it: 280 MB, 712 MB, 2440 MB -> 36M, 89M, 305M); two host threads per
# device worker (the default) and one, alternating
for h in 2 1 2 1; do
  stamp "tiles_bench cuda 8192 and 16384, budgets ~1/8, tiles.host_threads $h"
  IWPP_TILES_HOST_THREADS=$h timeout 60 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes 8192 --limits 56M,36M --reps 5 --no-bandwidth
  IWPP_TILES_HOST_THREADS=$h timeout 60 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes 16384 --limits 220M,89M --reps 3 --no-bandwidth
done
stamp "tiles_bench cuda 8192: budget 56M, workers"
timeout 100 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes 8192 --limits 56M --workers "gpu*2;gpu*3;gpu*2,cpu*8" --reps 5 --edt
stamp "tiles_bench cuda 32768: budgets 880M, 305M (1/8), workers"
timeout 240 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes 32768 --limits 880M,305M,2G --workers "gpu*2;gpu*3;gpu,cpu*8;gpu*2,cpu*8" --reps 3 --edt
stamp "tiles_bench opencl 8192"
timeout 60 stdbuf -oL "$B/bench/tiles_bench" --backend opencl --sizes 8192 --limits 256M --workers "gpu*2" --reps 3
stamp "tiles_bench cuda 65536: exact EDT in memory and with a 16 GB budget"
timeout 200 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes 65536 --limits 16G --edt-only --reps 2
BIG=${TILES_BIG-98304}
if [ -n "$BIG" ]; then
  stamp "tiles_bench cuda $BIG with a 16 GB budget"
  timeout 300 stdbuf -oL "$B/bench/tiles_bench" --backend cuda --sizes "$BIG" --limits 16G --wlimit 16G \
    --workers "${TILES_BIG_WORKERS:-gpu*3;gpu*4}" --reps 1
fi
stamp done
