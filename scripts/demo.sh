#!/usr/bin/env bash
# demo.sh - build IWPP and its ImageJ/Fiji plugin, then run headless ImageJ on
# scripts/demo.ijm: generated nuclei images through every IWPP command; results
# (TIFF + PNG) and the log (backend, timings) go to out/.
#
#   scripts/demo.sh              # build in build/, results in out/
#   BIG=8192 scripts/demo.sh     # also time an 8192x8192 8-bit reconstruction
#   BUILD_DIR=... OUT_DIR=... scripts/demo.sh
#
# Needs what scripts/setup.sh installs (cmake, gcc, a JDK, libij-java).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
out=${OUT_DIR:-$root/out}
big=${BIG:-0}

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target iwpp_plugin
jar=$build/IWPP_Plugin.jar
ij=$(sed -n 's/^IWPP_IJ_JAR:FILEPATH=//p' "$build/CMakeCache.txt")
java=$(sed -n 's/^Java_JAVA_EXECUTABLE:FILEPATH=//p' "$build/CMakeCache.txt")
if [ ! -f "$jar" ] || [ -z "$ij" ]; then
	echo "demo.sh: the plugin was not built (see the 'IWPP:' lines of cmake's output)" >&2
	exit 1
fi

# An ImageJ folder of its own with the plugin installed as a user would
# (plugins/IWPP_Plugin.jar); the native library is extracted from the jar.
imagej=$build/demo-imagej
mkdir -p "$imagej/plugins" "$out"
cp "$jar" "$imagej/plugins/IWPP_Plugin.jar"

arg="$out"
[ "$big" != 0 ] && arg="$out big=$big"
"${java:-java}" -Xmx4g -Djava.awt.headless=true -Dplugins.dir="$imagej" -cp "$ij" \
	ij.ImageJ -batch "$root/scripts/demo.ijm" "$arg" 2>&1 | tee "$out/demo-log.txt"
grep -q '^IWPP demo: results in' "$out/demo-log.txt" || { echo "demo.sh: the macro did not finish (see above)" >&2; exit 1; }
echo "demo.sh: $(ls "$out" | wc -l) files in $out (open the .png files, or the .tif in ImageJ/Fiji)"
