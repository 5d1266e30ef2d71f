#!/usr/bin/env bash
# Build the library and the benchmark, run the benchmark and the Python
# comparisons, and leave logs and CSV files in $OUT (default build-bench-out/).
# Made for the GPU machine (one H100, 16 cores, CUDA 13, sm_90); it also runs on a
# machine without a GPU (the GPU parts then say "not available").
#
#   bench/run_device.sh [cpu|gpu|all]      (default all)
#     cpu  CPU bars only: CPU-only build, rec-dil and exact EDT at 4096^2 and 8192^2,
#          sequential and 16 threads, then scikit-image / SciPy / OpenCV      (~4 min)
#     gpu  CUDA + OpenCL build, every backend and variant, Table 1, all operations,
#          the long-path spiral, CuPy comparisons, the TIFF demo            (~7 min)
#     all  both
# Sizes: IWPP_BENCH_SIZES, IWPP_BENCH_OPS_SIZES, IWPP_BENCH_BIG override them (quick trials).
# Files in $OUT: run_device.log, bench_*.csv, compare_*.csv (all: 10 files; the device tool
# returns 8, so run cpu and gpu as two calls there).
set -u
MODE=${1:-all}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build-bench-out}
THREADS=${IWPP_BENCH_THREADS:-$(nproc)}
DUMP=${IWPP_BENCH_DUMP:-/tmp/iwpp-bench-dump}
SIZES=${IWPP_BENCH_SIZES:-4096,8192}          # the bars' sizes
OPS_SIZES=${IWPP_BENCH_OPS_SIZES:-2048,160^3}  # the all-operations sweep
BIG=${IWPP_BENCH_BIG:-16384}
# every operation but the spiral (rec-maze: one-pixel wavefront, slow on GPUs; run apart, small)
OPS_ALL=rec-dil,rec-ero,hmax,regmax,open-rec,fill-holes,kill-borders,edt-exact,edt-dan
mkdir -p "$OUT" "$DUMP"
exec > >(tee "$OUT/run_device.log") 2>&1
export PYTHONUNBUFFERED=1
START=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - START )) s] $*"; }

stamp "machine"
uname -a
nproc
grep -m1 "model name" /proc/cpuinfo || true
lscpu 2>/dev/null | grep -E "^(CPU\(s\)|Thread|Core|Socket|Model name|L3)" || true
nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"
python3 -c 'import sys; print("python", sys.version.split()[0])'
python3 - <<'EOF' 2>&1
for m in ("numpy", "scipy", "skimage", "cv2", "cupy"):
    try:
        mod = __import__(m)
        print(f"  {m} {getattr(mod, '__version__', '?')}")
    except Exception as e:
        print(f"  {m}: MISSING ({type(e).__name__}: {e})")
EOF

# OpenCL: make sure the NVIDIA platform is visible (PoCL alone is a CPU device).
if [ -e /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1 ] || ldconfig -p 2>/dev/null | grep -q libnvidia-opencl; then
  if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
    mkdir -p /tmp/icd
    echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
    for f in /etc/OpenCL/vendors/*.icd; do [ -e "$f" ] && cp "$f" /tmp/icd/; done
    export OCL_ICD_VENDORS=/tmp/icd
    echo "OpenCL: added the NVIDIA ICD through OCL_ICD_VENDORS=/tmp/icd"
  fi
fi

build() { # $1 build dir, then cmake options
  local dir=$1; shift
  stamp "configure $dir $*"
  mkdir -p "$dir"
  cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DIWPP_ENABLE_JAVA=OFF -DIWPP_BUILD_TESTS=OFF "$@" \
    > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; return 1; }
  grep -E "IWPP:" "$dir/configure.log"
  stamp "build $dir"
  cmake --build "$dir" -j"$(nproc)" --target iwpp_bench iwpp_demo 2>&1 | grep -Ev '^\[|^-- ' | tail -40
  [ -x "$dir/bench/iwpp_bench" ] || { echo "BUILD FAILED"; return 1; }
}

run() { # $1 seconds, then the command
  local limit=$1; shift
  stamp "$*"
  timeout "$limit" "$@"
  local rc=$?
  [ $rc -eq 124 ] && echo "!! stopped after $limit s (timeout)"
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && echo "!! exit status $rc"
  return 0
}

if [ "$MODE" = cpu ] || [ "$MODE" = all ]; then
  B=$ROOT/build-dev-bench-cpu
  if build "$B" -DIWPP_ENABLE_CUDA=OFF -DIWPP_ENABLE_OPENCL=OFF; then
    # the issue's CPU bars: 8-connected U8 tissue, marker = mask - 40; exact EDT
    run 200 "$B/bench/iwpp_bench" --ops rec-dil,edt-exact --sizes "$SIZES" --types u8 --conn 8 \
      --backends cpu --threads "1,$THREADS" --reps 5 --budget 20 --dump "$DUMP/cpu" --csv "$OUT/bench_cpu.csv"
    run 200 python3 "$ROOT/bench/compare.py" --dir "$DUMP/cpu" --csv "$OUT/bench_cpu.csv" --threads "1,$THREADS" \
      --reps 3 --budget 25 --no-cupy --out "$OUT/compare_cpu.csv"
    # the other operations on the CPU, 2D and 3D, every type
    run 120 "$B/bench/iwpp_bench" --ops "$OPS_ALL,rec-maze" --sizes "${IWPP_BENCH_CPU_OPS_SIZES:-2048,128^3}" --types u8,u16,f32 --conn 4,8 \
      --backends cpu --threads "1,$THREADS" --reps 3 --budget 10 --csv "$OUT/bench_cpu_ops.csv"
  fi
fi

if [ "$MODE" = gpu ] || [ "$MODE" = all ]; then
  B=$ROOT/build-dev-bench
  if build "$B" -DCMAKE_CUDA_ARCHITECTURES=90; then
    # headline: reconstruction (Table 1 = the 4-connected rows at 4096^2) and EDT on CUDA; then
    # OpenCL in its own process (a crash there must not cost the CUDA figures)
    run 140 "$B/bench/iwpp_bench" --ops rec-dil,edt-exact,edt-dan --sizes "$SIZES" --types u8 --conn 4,8 \
      --backends cpu,cuda --threads "$THREADS" --variants ml,atomic,pf,mp \
      --reps 5 --budget 15 --dump "$DUMP/gpu" --csv "$OUT/bench_gpu.csv"
    run 50 "$B/bench/iwpp_bench" --ops rec-dil,edt-exact,edt-dan --sizes "$SIZES" --types u8 --conn 4,8 \
      --backends opencl --ocl-variants ml,mp --reps 5 --budget 15 --csv "$OUT/bench_ocl.csv"
    run 40 "$B/bench/iwpp_bench" --ops rec-dil,edt-exact --sizes "$BIG" --types u8 --conn 8 \
      --backends cuda --variants ml --reps 3 --budget 10 --csv "$OUT/bench_gpu_16k.csv"
    # every operation, type and dimensionality; the long-path spiral at small sizes
    run 70 "$B/bench/iwpp_bench" --ops "$OPS_ALL" --sizes "$OPS_SIZES" --types u8,u16,f32 --conn 8 \
      --backends cpu,cuda,opencl --threads "$THREADS" --variants ml,mp --ocl-variants ml \
      --reps 3 --budget 8 --csv "$OUT/bench_gpu_ops.csv"
    run 30 "$B/bench/iwpp_bench" --ops rec-maze --sizes 256,512 --conn 4 \
      --backends cpu,cuda,opencl --threads "$THREADS" --variants ml,mp --ocl-variants ml \
      --reps 3 --budget 8 --csv "$OUT/bench_maze.csv"
    run 80 python3 "$ROOT/bench/compare.py" --dir "$DUMP/gpu" --csv "$OUT/bench_gpu.csv" "$OUT/bench_ocl.csv" \
      --threads "$THREADS" --reps 2 --budget 10 --skimage-max 4096 --out "$OUT/compare_gpu.csv"
    run 15 "$B/bench/iwpp_demo" /tmp/iwpp-demo --size 2048
  fi
fi
stamp "done"
