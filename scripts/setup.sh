#!/usr/bin/env bash
# Installs the Debian packages the build, the tests and the demo need.
# Idempotent; works as root or through sudo. Usage: scripts/setup.sh
set -euo pipefail

packages=(
  build-essential cmake pkg-config          # C toolchain and CMake >= 3.25 (Debian 12 has 3.25)
  libcmocka-dev                              # C unit tests
  ocl-icd-opencl-dev opencl-headers          # OpenCL headers and ICD loader
  pocl-opencl-icd                            # OpenCL on the CPU: CI runs the real kernels here
  default-jdk-headless libij-java junit4     # JNI layer, Fiji/ImageJ plugin and its tests
  default-jre xvfb xauth                     # the plugin's GUI-path tests: AWT and a virtual display
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages already installed"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: run as root or install sudo" >&2; exit 1; }
  SUDO="sudo"
fi
echo "setup: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
