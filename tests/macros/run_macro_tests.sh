#!/usr/bin/env bash
# run_macro_tests.sh PLUGIN_JAR IJ_JAR [JAVA] - headless ImageJ macro tests.
#
# Installs the built plugin jar as a user would, into a FRESH ImageJ folder
# (a temporary dir with plugins/IWPP_Plugin.jar, given as -Dplugins.dir), with a
# fresh HOME (so no IJ_Prefs.txt and no ~/.cache/iwpp from earlier runs: the
# native library is extracted from the jar again), then runs
#   java -Djava.awt.headless=true -Dplugins.dir=DIR -cp ij.jar ij.ImageJ -batch X.ijm
# for each macro here. ImageJ exits 0 even when a macro fails, so the verdict
# comes from the log:
#   commands.ijm   must print "IWPP-MACRO-TESTS: PASS" and no "FAIL:" line;
#   tiles.ijm      must print "IWPP-TILES-MACRO: PASS", no "FAIL:" line, and
#                  log tile runs (the budget and worker list reached the library);
#   bad_*.ijm      must print the command's "... error: ..." line and must NOT
#                  reach the line after the failing command ("NOT-ABORTED");
#   no Java exception trace and no JVM crash (hs_err) in any run.
set -u
jar=${1:?plugin jar}; ij=${2:?ij.jar}; java=${3:-java}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$jar" ] || { echo "no plugin jar at $jar (build first)"; exit 1; }
[ -f "$ij" ] || { echo "no ij.jar at $ij"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/iwpp-macro-tests.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ImageJ/plugins" "$work/home"
cp "$jar" "$work/ImageJ/plugins/IWPP_Plugin.jar"

fail=0
run_one() { # macro -> log in $work/<name>.log, returns java's status
	local m=$1 log="$work/$(basename "$1" .ijm).log"
	(cd "$work" && HOME="$work/home" XDG_CACHE_HOME="$work/home/.cache" timeout 300 \
		"$java" -Xmx512m -Djava.awt.headless=true -Duser.home="$work/home" \
		-Dplugins.dir="$work/ImageJ" -cp "$ij" ij.ImageJ -batch "$m") >"$log" 2>&1
	local rc=$?
	echo "---- $(basename "$m") (exit $rc)"
	cat "$log"
	if [ $rc -ne 0 ] || grep -q -E '^(Exception|java\.|\s+at )|hs_err|SIGSEGV' "$log"; then
		echo "FAILED: $(basename "$m"): JVM exit $rc or a Java exception"
		fail=1
	fi
	return 0
}

run_one "$here/commands.ijm"
log="$work/commands.log"
if ! grep -q '^IWPP-MACRO-TESTS: PASS' "$log" || grep -q '^FAIL:' "$log"; then
	echo "FAILED: commands.ijm"; fail=1
fi
if ! grep -q -E 'backend (cpu|cuda|opencl)' "$log"; then
	echo "FAILED: commands.ijm did not log which backend ran"; fail=1
fi
if ! grep -q "$work/home/.cache/iwpp/" "$log"; then
	echo "FAILED: the native library was not extracted from the jar into the fresh cache"; fail=1
fi

run_one "$here/tiles.ijm"
log="$work/tiles.log"
if ! grep -q '^IWPP-TILES-MACRO: PASS' "$log" || grep -q '^FAIL:' "$log"; then
	echo "FAILED: tiles.ijm"; fail=1
fi
if ! grep -q -E 'tiles: [0-9]+ runs, 3 workers' "$log"; then
	echo "FAILED: tiles.ijm: no command logged tile runs on 3 workers"; fail=1
fi

expect_error() { # macro, text the error must contain
	run_one "$here/$1"
	local log="$work/$(basename "$1" .ijm).log"
	if ! grep -q -F "$2" "$log"; then echo "FAILED: $1: no error containing \"$2\""; fail=1; fi
	if grep -q 'NOT-ABORTED' "$log"; then echo "FAILED: $1: the macro was not stopped"; fail=1; fi
}
expect_error bad_connectivity.ijm "Fill Holes (IWPP) error: connectivity=8 is for 2D images"
expect_error bad_sizes.ijm "the marker is 8x8x1 but the mask is 9x8x1"
expect_error bad_type.ijm "RGB image; IWPP works on 8-bit, 16-bit and 32-bit images"
expect_error bad_backend.ijm "is not a valid choice for backend="
expect_error bad_workers.ijm "IWPP Settings... error: workers: worker list \"gpu*2,toaster\": cannot read \"toaster\""

if [ $fail -ne 0 ]; then echo "IWPP macro tests: FAILED"; exit 1; fi
echo "IWPP macro tests: all passed"
