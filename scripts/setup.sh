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
  # The jar's other platforms (cmake/natives.cmake) and their checks:
  gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user   # linux-aarch64, its C suite under qemu
  gcc-mingw-w64-x86-64-posix wine64          # windows-x86_64, its C suite under wine
  llvm unzip                                 # scripts/check_natives.sh (llvm-nm, llvm-readobj)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: run as root or install sudo" >&2; exit 1; }
  SUDO="sudo"
fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages already installed"
else
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# ---- cross-built natives (issue 14): zig from PyPI links the Linux libraries against
# glibc 2.17 and builds the macOS ones; CMocka's Debian source is built for each target.
zig_version=0.17.1
if ! python3 -c "import ziglang" 2>/dev/null; then
  echo "setup: installing ziglang==$zig_version (PyPI)"
  python3 -m pip install --quiet --disable-pip-version-check "ziglang==$zig_version" ||
    echo "setup: WARNING: no zig; the build skips the portable natives and says so" >&2
fi
cmocka_src=/usr/local/src/iwpp
if ! ls $cmocka_src/cmocka-*/src/cmocka.c >/dev/null 2>&1; then
  if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
    echo "setup: enabling Debian source packages (for CMocka's source)"
    printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' 'Suites: bookworm' \
      'Components: main' 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
      $SUDO tee /etc/apt/sources.list.d/iwpp-deb-src.sources >/dev/null
    $SUDO apt-get update -qq
  fi
  $SUDO mkdir -p $cmocka_src
  (cd $cmocka_src && $SUDO apt-get source -qq cmocka) ||
    echo "setup: WARNING: no CMocka source; the cross C suites are not built" >&2
fi
echo "setup: done"
