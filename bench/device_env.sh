# Sourced by the bench/*_device.sh scripts (one call on the GPU machine each): the log, a timer,
# CMocka from the carried .device/*.deb, and NVIDIA's OpenCL ICD beside any other.
#   LOG_NAME=tiles; . "$(dirname "$0")/device_env.sh"     (sets ROOT, OUT, START, stamp)
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
