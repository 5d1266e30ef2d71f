#!/usr/bin/env bash
# One call on the GPU machine for labeling and the watershed (issue 17): build (CUDA sm_90,
# OpenCL, tests), the label tests on CUDA and NVIDIA OpenCL (and the CPU), iwpp_cuda_checks labels
# (CUDA against the CPU, with times), then labels_bench on every backend at 4096^2, 8192^2 and
# 512^3 with dumps, and compare_labels.py on the CPU's dumps: scikit-image's label and watershed,
# CuPy's label, in the same run.
#   bash bench/labels_device.sh [test|bench|all|families]     (needs .device/ carried for CMocka)
# LABEL_SIZES (default 4096,8192,512x3), LABEL_REPS (5). families: labeling on every input family
# (LABEL_FAMILIES) on CUDA, the tile path (IWPP_CUDA_LABEL_RUNS=0) and the CPU, then CuPy on the
# same inputs and the CUDA == CPU check (compare_label_families.py), after the test phase.
set -u
PHASE=${1:-all}
LOG_NAME=labels
. "$(dirname "$0")/device_env.sh"
nvidia-smi -L; nproc
B=$ROOT/build-labels
device_configure "$B"
stamp build
cmake --build "$B" -j16 2>&1 | grep -E "warning|error" | head -20
if [ "$PHASE" != bench ]; then
  stamp "ctest: labels on cuda, opencl, cpu"
  (cd "$B" && timeout 300 ctest -j4 --output-on-failure -R "label" 2>&1 | tail -30)
  stamp "iwpp_cuda_checks labels"
  timeout 120 "$B/tests/iwpp_cuda_checks" labels 2>&1 | tail -30
  stamp "compute-sanitizer memcheck on the CUDA label tests"
  (cd "$B" && IWPP_TEST_BACKEND=cuda IWPP_TEST_GPU_CONFIGS=queue timeout 150 \
    compute-sanitizer --tool memcheck tests/test_labels 2>&1 | tail -4)
fi
[ "$PHASE" = test ] && { stamp done; exit 0; }
if [ "$PHASE" = families ]; then
  SIZES=${LABEL_SIZES:-4096,8192}
  F=${LABEL_FAMILIES:-nuclei,rand_0.5,rand_0.1,rand_1e-2,rand_1e-4,checker1,checker8,spiral,line45,cross,disk_n2,ring_n4}
  rm -rf /tmp/lf_cuda /tmp/lf_cpu; mkdir -p /tmp/lf_cuda /tmp/lf_cpu
  stamp "labels_bench cuda, families"
  timeout 200 "$B/bench/labels_bench" --backend cuda --sizes "$SIZES" --cases label --reps 9 --families "$F" \
    --dump /tmp/lf_cuda | tee "$OUT/families_cuda.txt"
  stamp "the same on the tile path"
  IWPP_CUDA_LABEL_RUNS=0 timeout 200 "$B/bench/labels_bench" --backend cuda --sizes "$SIZES" --cases x --reps 5 \
    --families "$F" | tee "$OUT/families_cuda_tiles.txt"
  stamp "labels_bench cpu, families (for the check)"
  timeout 300 "$B/bench/labels_bench" --backend cpu --threads "$(nproc)" --sizes "$SIZES" --cases x --reps 1 \
    --families "$F" --dump /tmp/lf_cpu > "$OUT/families_cpu.txt"
  stamp "compare_label_families.py"
  python3 "$ROOT/bench/compare_label_families.py" /tmp/lf_cuda /tmp/lf_cpu | tee "$OUT/families_cupy.txt"
  stamp done
  exit 0
fi
SIZES=${LABEL_SIZES:-4096,8192,512x3}
DUMP=/tmp/labels-dump
rm -rf "$DUMP"; mkdir -p "$DUMP"
for be in cuda opencl cpu; do
  stamp "labels_bench $be $SIZES"
  d=""
  [ "$be" = cpu ] && d="--dump $DUMP"
  timeout 200 stdbuf -oL "$B/bench/labels_bench" --backend "$be" --threads "$(nproc)" --sizes "$SIZES" \
    --reps "${LABEL_REPS:-5}" $d 2>&1 | tee "$OUT/labels_$be.txt"
done
stamp "labels_bench cpu, one thread (the sequential bar)"
timeout 200 stdbuf -oL "$B/bench/labels_bench" --backend cpu --threads 1 --sizes 4096,8192 --reps 3 2>&1 \
  | tee "$OUT/labels_cpu1.txt"
stamp "compare_labels.py (scikit-image, CuPy)"
PYTHONUNBUFFERED=1 timeout 300 python3 "$ROOT/bench/compare_labels.py" "$DUMP" --reps 3 2>&1 | tee "$OUT/compare_labels.txt"
stamp done
