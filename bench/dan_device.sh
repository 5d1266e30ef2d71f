#!/usr/bin/env bash
# One call on the GPU machine for the Danielsson EDT (issue 12): build (CUDA sm_90, OpenCL, tests),
# test_edt on CUDA and NVIDIA's OpenCL, then edt_families --method danielsson on every family by
# tiles (the default) and pixel by pixel through the queues ({cuda,ocl}.dan_tiles=0) in the same
# run, each checked against its bounds, and bench/dan_ratios.py: OpenCL / CUDA and tiles / queues
# per family, the worst family per size.
#   bash bench/dan_device.sh [test|bench|all]     (needs .device/ carried for CMocka)
# DAN_SIZES (default 4096,8192,512^3), DAN_REPS (3), DAN_QUEUE (1: also the queues; 0: skip),
# DAN_SIDES (extra 2D tile sides to time, e.g. "16 64"; default none), DAN_SWITCHES (extra runs of
# the queues with {cuda,ocl}.dan_switch at each value, e.g. "1 16 64"; default none), DAN_FAMILIES
# (edt_families --families: "all", or e.g. "ring_n4,row,line0"), DAN_FILTER (the tests: only
# those test_edt cases, e.g. "test_danielsson*"), DAN_RUNS (more runs of the queues, separated
# by ';', each "name:SETTING,SETTING..." where a setting is VAR=value for the environment or an edt_families
# option such as --queue=atomic or --backends=opencl; e.g. "g8:IWPP_OCL_QUEUE_GROUPS=8"),
# DAN_REGS=1 (registers and spills of the queue kernels: ptxas on NVIDIA OpenCL's cached PTX,
# cuobjdump on the CUDA library).
set -u
PHASE=${1:-all}
LOG_NAME=dan
. "$(dirname "$0")/device_env.sh"
nvidia-smi -L; nproc
B=$ROOT/build-dan
device_configure "$B"
stamp build
cmake --build "$B" -j16 --target test_edt edt_families 2>&1 | grep -E "warning|error" | head -20
if [ "$PHASE" != bench ]; then
  stamp "test_edt on cuda and opencl"
  (cd "$B" && IWPP_TEST_FILTER="${DAN_FILTER:-}" timeout 300 ctest -j2 --output-on-failure -R "test_edt_(cuda|opencl)" 2>&1 | tail -30)
fi
[ "$PHASE" = test ] && { stamp done; exit 0; }
SIZES=${DAN_SIZES:-4096,8192,512^3}
fam() { # name, then settings: VAR=value (environment) or --option=value (edt_families)
  local name=$1; shift
  local envs=() opts=() backends=cuda,opencl
  for a in "$@"; do
    case "$a" in
    --backends=*) backends=${a#--backends=} ;;
    --*=*) opts+=("${a%%=*}" "${a#*=}") ;;
    *) envs+=("$a") ;;
    esac
  done
  stamp "edt_families danielsson $name $SIZES $*"
  env "${envs[@]}" timeout 300 stdbuf -oL "$B/bench/edt_families" --method danielsson --sizes "$SIZES" \
    --backends "$backends" --families "${DAN_FAMILIES:-all}" --threads "$(nproc)" --reps "${DAN_REPS:-3}" --stats \
    --csv "$OUT/dan_$name.csv" "${opts[@]}" | grep -E "==|FAIL|differ|outside|#"
}
fam tiles
for side in ${DAN_SIDES:-}; do fam "tiles$side" IWPP_CUDA_DAN_TILES="$side" IWPP_OCL_DAN_TILES="$side"; done
[ "${DAN_QUEUE:-1}" = 1 ] && fam queue IWPP_CUDA_DAN_TILES=0 IWPP_OCL_DAN_TILES=0
for sw in ${DAN_SWITCHES:-}; do
  fam "queue_switch$sw" IWPP_CUDA_DAN_TILES=0 IWPP_OCL_DAN_TILES=0 IWPP_CUDA_DAN_SWITCH="$sw" IWPP_OCL_DAN_SWITCH="$sw"
done
IFS=';' read -r -a runs <<<"${DAN_RUNS:-}"
for spec in "${runs[@]}"; do
  IFS=, read -r -a sets <<<"${spec#*:}"
  fam "${spec%%:*}" IWPP_CUDA_DAN_TILES=0 IWPP_OCL_DAN_TILES=0 "${sets[@]}"
done
if [ "${DAN_REGS:-0}" = 1 ]; then
  stamp "registers and spills of the queue kernels: ptxas on each cached OpenCL EDT program (oldest first), cuobjdump"
  # the CUDA tools beside the nvcc that CMake found (looked up on PATH and in /usr/local, in session
  # 29, they printed nothing; the PTX files came back)
  CUBIN=$(dirname "$(grep -m1 '^CMAKE_CUDA_COMPILER:' "$B/CMakeCache.txt" | cut -d= -f2)")
  PTXAS=$CUBIN/ptxas CUOBJDUMP=$CUBIN/cuobjdump
  [ -x "$PTXAS" ] || echo "# no ptxas beside the CUDA compiler ($CUBIN)"
  i=0
  for f in $(ls -tr "${IWPP_CL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/iwpp/cl}"/*.bin 2>/dev/null); do
    python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); i=d.find(b"//"); sys.stdout.buffer.write(d[i:] if i>=0 else b"")' \
      "$f" >/tmp/prog.ptx
    grep -q "edt_dan_queue" /tmp/prog.ptx || continue
    i=$((i + 1)); [ $i -le 2 ] && cp /tmp/prog.ptx "$OUT/edt_program$i.ptx"
    echo "# $f"; "$PTXAS" -arch=sm_90 -v /tmp/prog.ptx -o /dev/null 2>&1 | grep -A4 "'edt_dan_queue'" | grep -E "registers|spill"
  done
  find "$B" -name "*.so" | xargs -r "$CUOBJDUMP" --dump-resource-usage 2>/dev/null | grep -A1 "mlq_kernel.*dan_op" | head -6
fi
stamp ratios
python3 "$ROOT/bench/dan_ratios.py" "$OUT/dan_tiles.csv" $(ls "$OUT"/dan_*.csv | grep -v "/dan_tiles.csv$")
stamp done
