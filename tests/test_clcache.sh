#!/usr/bin/env bash
# test_clcache.sh CHECK_PROGRAM - OpenCL program binaries cached across runs
# (opencl/backend.c): a first run saves them into IWPP_CL_CACHE; the next run
# loads them (the files are not rewritten: same inode) with the same results;
# corrupt or truncated files are rebuilt from source and replaced, with the
# same results; IWPP_OCL_BUILD_OPTIONS makes other binaries, and options the compiler refuses
# an error. Exit 77 (skipped) without an OpenCL device.
set -u
prog=${1:?clcache_check program}
dir=$(mktemp -d "${TMPDIR:-/tmp}/iwpp-clcache.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export IWPP_CL_CACHE="$dir"
files() { stat -c '%n %i %s' "$dir"/*.bin 2>/dev/null | sort; }

"$prog"; rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "FAIL: the first run (building from source)"; exit 1; }
n=$(ls "$dir"/*.bin 2>/dev/null | wc -l)
[ "$n" -ge 2 ] || { echo "FAIL: $n program binaries saved (expected one per program and type used)"; exit 1; }
saved=$(files)

"$prog" || { echo "FAIL: the run from cached binaries"; exit 1; }
[ "$(files)" = "$saved" ] || { echo "FAIL: the binaries were rebuilt instead of loaded"; exit 1; }

for f in "$dir"/*.bin; do printf 'not a kernel' | dd of="$f" bs=1 seek=200 conv=notrunc status=none; done
"$prog" || { echo "FAIL: the run after the binaries were corrupted"; exit 1; }
[ "$(files)" != "$saved" ] || { echo "FAIL: corrupt binaries were not replaced"; exit 1; }

for f in "$dir"/*.bin; do truncate -s 30 "$f"; done
"$prog" || { echo "FAIL: the run after the binaries were truncated"; exit 1; }
rebuilt=$(files)
"$prog" || { echo "FAIL: the run from the rebuilt binaries"; exit 1; }
[ "$(files)" = "$rebuilt" ] || { echo "FAIL: the rebuilt binaries were not used"; exit 1; }
ls "$dir" | grep -q '\.tmp$' && { echo "FAIL: a temporary file was left"; exit 1; }
# IWPP_OCL_BUILD_OPTIONS is part of the key: other options, other binaries, the same results;
# options the compiler refuses: an error from the library that names the variable, no crash
IWPP_OCL_BUILD_OPTIONS=-DIWPP_CLCACHE_TEST=1 "$prog" || { echo "FAIL: the run with extra build options"; exit 1; }
m=$(ls "$dir"/*.bin | wc -l)
[ "$m" -eq $((2 * n)) ] || { echo "FAIL: $m binaries after a run with extra build options (expected $((2 * n)))"; exit 1; }
out=$(IWPP_OCL_BUILD_OPTIONS=-cl-no-such-option "$prog" 2>&1); rc=$?
[ $rc -eq 1 ] || { echo "FAIL: refused build options: exit $rc (expected 1, the library's error): $out"; exit 1; }
echo "$out" | grep -q "IWPP_OCL_BUILD_OPTIONS" || { echo "FAIL: the error does not name IWPP_OCL_BUILD_OPTIONS: $out"; exit 1; }
echo "test_clcache: PASS ($n binaries)"
