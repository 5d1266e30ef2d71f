#!/usr/bin/env bash
# One call on the GPU machine for the 2D exact EDT by column bands (cuda/edt_colbands.cuh):
# build, test_edt on CUDA (and NVIDIA OpenCL), edt_families at 4096^2 and 8192^2 with the column
# bands against the merged rows (IWPP_*_EDT_BANDS=0) in the same run, a few band shapes, and
# the time of each kernel (ncu) on the families that cost most.
#   bash bench/colbands_device.sh [test|bench|all]   (needs .device/ carried for CMocka)
# CB_DETAIL: families for ncu's details of the column-band kernels; CB_TEST: the test_edt backends (default cuda|opencl); CB_SHAPES: "K,R" settings to time at 8192^2 (default: "32,64 64,32 64,64 16,128");
# CB_BACKENDS (cuda), CB_NCU (col,checker64,ring_n1,rand_0.5; "" to skip).
set -u
PHASE=${1:-all}
LOG_NAME=colbands
. "$(dirname "$0")/device_env.sh"
nvidia-smi -L
B=$ROOT/build-colbands
device_configure "$B"
stamp build
cmake --build "$B" -j16 --target test_edt edt_families 2>&1 | grep -E "warning|error" | head -20
if [ "$PHASE" != bench ]; then
  stamp "ctest: test_edt"
  (cd "$B" && timeout 240 ctest -j2 --output-on-failure -R "test_edt_(${CB_TEST:-cuda|opencl})" 2>&1 |
    grep -E "FAIL|ERROR|tests passed|Test +#" | head -40)
fi
[ "$PHASE" = test ] && { stamp done; exit 0; }
BK=${CB_BACKENDS:-cuda}
F=$B/bench/edt_families
for rep in 1 2; do
  stamp "edt_families 4096,8192 ($BK): column bands, then merged rows (run $rep)"
  timeout 120 "$F" --sizes 4096,8192 --backends "$BK" --threads 16 --reps 5 --csv "$OUT/fam_bands_$rep.csv" | grep "=="
  IWPP_CUDA_EDT_BANDS=0 IWPP_OCL_EDT_BANDS=0 timeout 120 "$F" --sizes 4096,8192 --backends "$BK" --threads 16 \
    --reps 5 --no-check --csv "$OUT/fam_rows_$rep.csv" | grep "=="
done
for v in ${CB_SHAPES:-32,64 64,32 64,64 16,128}; do
  stamp "IWPP_CUDA_EDT_BANDS=$v"
  IWPP_CUDA_EDT_BANDS=$v IWPP_OCL_EDT_BANDS=$v timeout 60 "$F" --sizes 4096,8192 --backends "$BK" --threads 16 \
    --reps 3 --no-check --csv "$OUT/fam_shape_$v.csv" | grep "=="
done
NCU=${CB_NCU-col,checker64,ring_n1,rand_0.5}
for fam in ${NCU//,/ }; do
  for sz in 4096 8192; do
    stamp "ncu: $fam $sz"
    timeout 60 ncu --csv --metrics gpu__time_duration.sum "$F" --sizes $sz --families "$fam" --backends cuda \
      --reps 1 --no-check 2>/dev/null | python3 "$ROOT/bench/ncu_sum.py" | head -8
  done
done
for fam in ${CB_DETAIL:-}; do
  stamp "ncu details: $fam 8192, the column-band kernels"
  timeout 90 ncu --section SpeedOfLight --section Occupancy --section WarpStateStats -k "regex:edt_cb_(hull|colour)" -c 2 \
    "$F" --sizes 8192 --families "$fam" --backends cuda --reps 1 --no-check 2>/dev/null |
    grep -E "edt_cb_|Duration|Throughput|Achieved Occupancy|Theoretical Occupancy|Stall|Warp Cycles Per Issued|Registers" | head -60
done
stamp done
