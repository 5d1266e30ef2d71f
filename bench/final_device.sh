#!/usr/bin/env bash
# One call on the GPU machine: build everything (CUDA sm_90, OpenCL, tests, bench), run the
# CMocka suite on every backend (CUDA, NVIDIA OpenCL, CPU), compute-sanitizer on a subset, and
# the headline benchmarks with the Python baselines. Logs go to $OUT.
#   bash bench/final_device.sh [all|test|bench]   (needs .device/ carried for CMocka)
# test = build + ctest + compute-sanitizer, bench = build (kept from a test call on a warm
# machine) + benchmarks + compare.py; all = both (about 8 minutes: split it to stay under the
# device tool's 10 minutes per call).
set -u
PHASE=${1:-all}
LOG_NAME=final
. "$(dirname "$0")/device_env.sh"
nvidia-smi -L; nproc
B=$ROOT/build-final
device_configure "$B" -DIWPP_TEST_GPU_CONFIGS=queue,megapixel,atomic,prefixsum
stamp build
cmake --build "$B" -j16 2>&1 | grep -E "warning|error" | head -20
if [ "$PHASE" != bench ]; then
stamp "ctest (all backends)"
(cd "$B" && timeout 240 ctest -j6 --output-on-failure 2>&1 | tail -40)
stamp "compute-sanitizer"
T=$B/tests/iwpp_cuda_checks
[ -x "$T" ] || T=$(find "$B" -name iwpp_cuda_checks -type f | head -1)
timeout 60 compute-sanitizer --tool memcheck --leak-check full "$T" -2 2>&1 | tail -4
timeout 60 compute-sanitizer --tool racecheck "$T" -2 2>&1 | tail -3
(cd "$B" && IWPP_TEST_BACKEND=cuda IWPP_TEST_GPU_CONFIGS=queue IWPP_TEST_FILTER=random timeout 90 \
  compute-sanitizer --tool memcheck tests/test_extrema 2>&1 | tail -4)
# the pinned staging path (every transfer staged, in small chunks) and the EDT kernels
(cd "$B" && IWPP_CUDA_STAGE_MIN=0 IWPP_CUDA_STAGE_CHUNK=64K IWPP_TEST_BACKEND=cuda IWPP_TEST_GPU_CONFIGS=queue \
  IWPP_TEST_FILTER="test_random*" timeout 120 compute-sanitizer --tool memcheck tests/test_edt 2>&1 | tail -4)
fi
[ "$PHASE" = test ] && { stamp done; exit 0; }
stamp "bench: reconstruction + EDT, 4096/8192, cpu t1/t16, cuda variants, opencl"
timeout 150 "$B/bench/iwpp_bench" --ops rec-dil,edt-exact,edt-dan --sizes 4096,8192 --types u8 --conn 4,8 \
  --backends cpu,cuda,opencl --threads 16 --variants ml,atomic,pf,mp --ocl-variants ml \
  --reps 5 --budget 10 --dump /tmp/dump --csv "$OUT/bench_final.csv"
stamp "cpu_probe: how the 16 cores scale (compute, L2, DRAM)"
timeout 60 "$B/bench/cpu_probe" 16
stamp "bench: CPU scaling, reconstruction 8-conn and exact EDT, 1..16 threads"
timeout 150 "$B/bench/iwpp_bench" --ops rec-dil,edt-exact --sizes 4096,8192 --types u8 --conn 8 --backends cpu \
  --threads 1,2,4,8,16 --reps 7 --budget 8 --csv "$OUT/bench_cpu_scaling.csv" | grep -v "^#"
stamp "compare (OpenCV, SciPy, CuPy; scikit-image up to 4096)"
timeout 90 python3 "$ROOT/bench/compare.py" --dir /tmp/dump --csv "$OUT/bench_final.csv" --threads 16 \
  --reps 2 --budget 10 --skimage-max 4096 --out "$OUT/compare_final.csv" 2>&1 | tail -40
stamp done
