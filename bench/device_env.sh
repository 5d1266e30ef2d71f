# Sourced by the bench/*_device.sh scripts (one call on the GPU machine each): the log, a timer,
# CMocka from the carried .device/*.deb, and NVIDIA's OpenCL ICD beside any other.
#   LOG_NAME=tiles; . "$(dirname "$0")/device_env.sh"     (sets ROOT, OUT, START, stamp,
#   device_configure)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$ROOT/build-$LOG_NAME-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/$LOG_NAME.log") 2>&1
START=$(date +%s)
stamp() { echo "== [$(( $(date +%s) - START )) s] $*"; }
mkdir -p /tmp/cm && for f in "$ROOT"/.device/*.deb; do [ -e "$f" ] && dpkg -x "$f" /tmp/cm; done
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
  mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
  for f in /etc/OpenCL/vendors/*.icd; do [ -e "$f" ] && cp "$f" /tmp/icd/; done
  export OCL_ICD_VENDORS=/tmp/icd
fi
# device_configure DIR [cmake args]: configures a Release build in DIR for the H100/H200 (sm_90),
# CUDA and OpenCL, the C tests with the carried CMocka, no Java; prints only IWPP's lines and errors.
device_configure() {
  local dir=$1; shift
  stamp configure
  cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DIWPP_ENABLE_JAVA=OFF -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_PREFIX_PATH=/tmp/cm/usr -DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath,/tmp/cm/usr/lib/x86_64-linux-gnu \
    "$@" 2>&1 | grep -E "IWPP|Error"
}
