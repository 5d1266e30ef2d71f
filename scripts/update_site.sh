#!/usr/bin/env bash
# Lays out a Fiji update site's files: out/update-site/plugins/IWPP_Plugin.jar (the plugin,
# with its native libraries for linux-x86_64, linux-aarch64, windows-x86_64, macos-x86_64
# and macos-arm64 inside) and out/update-site/jars/ (library jars: none are needed beyond
# ImageJ itself, so it stays empty). The paths are those of a Fiji.app folder, which is
# what Fiji's updater mirrors. How to publish it and how users install it: README.md,
# "Fiji update site".
# Usage: scripts/update_site.sh [build-dir]   (builds the jar there first if needed)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-${BUILD_DIR:-build}}
out=${OUT_DIR:-out}/update-site
if [ ! -f "$build/IWPP_Plugin.jar" ]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target iwpp_plugin
fi
# Every platform's library must be in the jar, or the site would break some users.
scripts/check_natives.sh "$build/IWPP_Plugin.jar"
rm -rf "$out"
mkdir -p "$out/plugins" "$out/jars"
cp "$build/IWPP_Plugin.jar" "$out/plugins/IWPP_Plugin.jar"
unzip -l "$out/plugins/IWPP_Plugin.jar" 'native/*' | awk '$4 ~ /^native\/.+\/.+/ {print "  " $4}'
echo "update_site: $out/plugins/IWPP_Plugin.jar ($(wc -c < "$out/plugins/IWPP_Plugin.jar") bytes), $out/jars/ (empty)"
