#!/usr/bin/env bash
# One call on the GPU machine for the exact EDT by input family (issue 12): build (CUDA sm_90,
# OpenCL, tests), test_edt on CUDA and NVIDIA OpenCL, edt_families on every family (bit-exact
# check against the CPU, worst family per size), then compare.py --families (CuPy in the same
# run, SciPy bit-equality up to SCIPY_MAX pixels), and the older banded row pass for comparison.
#   bash bench/edt_device.sh [test|bench|all]     (needs .device/ carried for CMocka)
# EDT_SIZES (default 4096,8192,512^3: the bars; a second call can take 1024,16384,256^3 with
# SCIPY_MAX=0 EDT_BEFORE=""), EDT_REPS (5), SCIPY_MAX (16777216 = 4096^2: SciPy bit-equality),
# EDT_BEFORE (default 8192: sizes also run with the older banded row pass; "" to skip).
# Estimated 6-7 minutes with the defaults (build 2-3, tests 1-2, families 1, CuPy + SciPy 2).
set -u
PHASE=${1:-all}
LOG_NAME=edt
. "$(dirname "$0")/device_env.sh"
nvidia-smi -L; nproc
B=$ROOT/build-edt
device_configure "$B"
stamp build
cmake --build "$B" -j16 --target test_edt edt_families 2>&1 | grep -E "warning|error" | head -20
if [ "$PHASE" != bench ]; then
  stamp "ctest: test_edt on cuda and opencl"
  (cd "$B" && timeout 240 ctest -j2 --output-on-failure -R "test_edt_(cuda|opencl)" 2>&1 | tail -30)
fi
[ "$PHASE" = test ] && { stamp done; exit 0; }
SIZES=${EDT_SIZES:-4096,8192,512^3}
DUMP=/tmp/edt-fam
rm -rf "$DUMP"
stamp "edt_families $SIZES"
timeout 360 stdbuf -oL "$B/bench/edt_families" --sizes "$SIZES" --backends cuda,opencl --threads "$(nproc)" \
  --reps "${EDT_REPS:-5}" --dump "$DUMP" --dump-out-max 16777216 --csv "$OUT/edt_families.csv"
stamp "compare.py --families (CuPy, SciPy up to ${SCIPY_MAX:-16777216} pixels)"
PYTHONUNBUFFERED=1 timeout 300 python3 "$ROOT/bench/compare.py" --families "$DUMP" --csv "$OUT/edt_families.csv" \
  --scipy-max "${SCIPY_MAX:-16777216}" --out "$OUT/edt_compare.csv"
BEFORE=${EDT_BEFORE-8192}
if [ -n "$BEFORE" ]; then
  stamp "older banded row pass (IWPP_*_EDT_ROWS=banded) at $BEFORE"
  IWPP_CUDA_EDT_ROWS=banded IWPP_OCL_EDT_ROWS=banded timeout 120 stdbuf -oL "$B/bench/edt_families" \
    --sizes "$BEFORE" --backends cuda,opencl --threads "$(nproc)" --reps 3 --csv "$OUT/edt_families_banded.csv" | grep "=="
fi
stamp done
