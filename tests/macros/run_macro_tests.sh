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
#
# With a 4th argument "labels", only labels.ijm and the label commands' refusals
# run (headless; ctest imagej_macros_labels).
# With a 4th argument "gui" (ctest runs it under xvfb-run) the JVM has a display:
# every command then reads its options through ImageJ's GenericDialog, as in
# the Fiji/ImageJ GUI. That run checks every bad choice on that path and runs
# builtins.ijm (ImageJ's own dialog commands need a display in plain ImageJ).
# The headless run also checks the Log of a 200-image batch (batch200.ijm: at
# most one line per image by default) and the built-in command table
# (builtins_table.ijm).
set -u
jar=${1:?plugin jar}; ij=${2:?ij.jar}; java=${3:-java}; mode=${4:-headless}
headless_flag=-Djava.awt.headless=true
if [ "$mode" = gui ]; then
	headless_flag=-Djava.awt.headless=false
	[ -n "${DISPLAY:-}" ] || { echo "gui mode needs a display (run it under xvfb-run)"; exit 1; }
fi
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
		"$java" -Xmx512m $headless_flag -Duser.home="$work/home" \
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

expect_error() { # macro, text the error must contain
	run_one "$1"
	local log="$work/$(basename "$1" .ijm).log"
	if ! grep -q -F "$2" "$log"; then echo "FAILED: $(basename "$1"): no error containing \"$2\""; fail=1; fi
	if grep -q 'NOT-ABORTED' "$log"; then echo "FAILED: $(basename "$1"): the macro was not stopped"; fail=1; fi
}
# bad_choice NAME "macro lines" "expected error text": a generated macro whose
# last command must stop it with that error (and make no image).
bad_choice() {
	local m="$work/bad_choice_$1.ijm"
	{
		echo 'installed = call("iwpp.plugin.IwppHeadless.install");'
		echo 'setBatchMode(true);'
		echo 'newImage("img", "8-bit black", 8, 8, 1);'
		echo 'newImage("stack", "8-bit black", 8, 8, 4);'
		echo 'newImage("seed", "8-bit black", 8, 8, 1);'
		echo 'before = nImages;'
		printf '%s\n' "$2"
		echo 'print("NOT-ABORTED: the macro went on after an error; images " + nImages + " (before: " + before + ")");'
	} >"$m"
	expect_error "$m" "$3"
}
bad_choices() {
	bad_choice backend 'selectImage("img"); run("Kill Borders (IWPP)", "connectivity=8 backend=gpu");' \
		'Kill Borders (IWPP) error: "gpu" is not a valid choice for backend=; use auto, cpu, cuda or opencl.'
	bad_choice method 'selectImage("img"); run("Distance Transform (IWPP)", "method=chamfer");' \
		'Distance Transform (IWPP) error: "chamfer" is not a valid choice for method=; use exact or danielsson.'
	bad_choice operation 'run("Morphological Reconstruction (IWPP)", "marker=seed mask=img connectivity=8 operation=opening");' \
		'error: "opening" is not a valid choice for operation=; use dilation or erosion.'
	bad_choice stack 'selectImage("stack"); run("Fill Holes (IWPP)", "connectivity=4 stack=volume");' \
		'Fill Holes (IWPP) error: "volume" is not a valid choice for stack=; use slices or 3d.'
	bad_choice marker 'run("Morphological Reconstruction (IWPP)", "marker=nosuch mask=img connectivity=8 operation=dilation");' \
		'error: "nosuch" is not a valid choice for marker=; use img, stack or seed.'
	bad_choice device 'run("IWPP Settings...", "backend=cpu device=[OpenCL 7: nothing] threads=0 memory=0 workers=[this device]");' \
		'IWPP Settings... error: "OpenCL 7: nothing" is not a valid choice for device=; use default'
	bad_choice conn2d 'selectImage("img"); run("Fill Holes (IWPP)", "connectivity=6");' \
		'Fill Holes (IWPP) error: Connectivity 6 is for 3D volumes, but "img" is a 2D image; use 4 or 8.'
	bad_choice conn 'selectImage("img"); run("Regional Maxima (IWPP)", "connectivity=5");' \
		'"5" is not a valid choice for connectivity=; use 4, 8, 6, 18 or 26.'
	bad_choice hyperstack 'newImage("m23", "8-bit black", 8, 8, 2, 3, 1); newImage("k32", "8-bit black", 8, 8, 3, 2, 1); run("Morphological Reconstruction (IWPP)", "marker=m23 mask=k32 connectivity=8 operation=dilation stack=slices");' \
		'The marker "m23" has 2 channel(s) x 3 slice(s) x 1 frame(s) but the mask "k32" has 3 channel(s) x 2 slice(s) x 1 frame(s)'
	bad_choice number 'selectImage("img"); run("H-Maxima (IWPP)", "h=abc connectivity=8");' \
		'H-Maxima (IWPP) error: "abc" is not a number (h=).'
	bad_choice nan 'newImage("with nan", "32-bit black", 8, 8, 3); setSlice(2); setPixel(1, 2, NaN); run("H-Maxima (IWPP)", "h=1 connectivity=8 stack=slices");' \
		'H-Maxima (IWPP) error: "with nan" has a NaN pixel at x=1, y=2 in slice 2; replace NaN first'
	run_one "$here/gui_images.ijm"
	if ! grep -q '^IWPP-IMAGES: PASS' "$work/gui_images.log"; then echo "FAILED: gui_images.ijm ($mode)"; fail=1; fi
	if ! grep -q 'Distance Transform (IWPP): warning: "no background" has no zero (background) pixel' "$work/gui_images.log"; then
		echo "FAILED: gui_images.ijm ($mode): no warning for an EDT without background"; fail=1
	fi
}

# labels.ijm and the label commands' refusals (also its own ctest: "labels" mode)
label_tests() {
	run_one "$here/labels.ijm"
	if ! grep -q '^IWPP-LABELS-MACRO: PASS' "$work/labels.log" || grep -q '^FAIL:' "$work/labels.log"; then
		echo "FAILED: labels.ijm ($mode)"; fail=1
	fi
	bad_choice float_marker 'newImage("relief", "8-bit black", 8, 8, 1); newImage("fm", "32-bit black", 8, 8, 1); setPixel(2, 3, 1.5); run("Marker-controlled Watershed (IWPP)", "input=relief marker=fm mask=None connectivity=8 output=auto");' \
		'Marker-controlled Watershed (IWPP) error: The marker "fm" has the value 1.5 at x=2, y=3; labels must be whole numbers'
	bad_choice label_output 'selectImage("img"); run("Connected Components Labeling (IWPP)", "mode=binary connectivity=8 output=64-bit");' \
		'"64-bit" is not a valid choice for output=; use auto, 16-bit or 32-bit.'
	bad_choice label_overflow 'newImage("checker", "8-bit black", 512, 512, 1); for (y = 0; y < 512; y++) for (x = (y % 2); x < 512; x += 2) setPixel(x, y, 255); run("Connected Components Labeling (IWPP)", "mode=binary connectivity=4 output=16-bit");' \
		'131072 labels do not fit in a 16-bit label image (at most 65535); choose output=32-bit or output=auto.'
	bad_choice size_range 'newImage("lab16", "16-bit black", 8, 8, 1); run("Label Size Filtering (IWPP)", "min=10 max=5");' \
		'Label Size Filtering (IWPP) error: The maximum (5) is below the minimum (10); use max=0 for no upper limit.'
	bad_choice dtws_dynamic 'selectImage("img"); run("Distance Transform Watershed (IWPP)", "dynamic=-1 connectivity=8 output=auto");' \
		'Distance Transform Watershed (IWPP) error: The dynamic must be a finite number of 0 or more'
}

if [ "$mode" = labels ]; then
	label_tests
	if [ $fail -ne 0 ]; then echo "IWPP label macro tests: FAILED"; exit 1; fi
	echo "IWPP label macro tests: all passed"
	exit 0
fi

if [ "$mode" = gui ]; then
	label_tests
	bad_choices
	run_one "$here/builtins.ijm"
	if ! grep -q '^IWPP-BUILTINS: PASS' "$work/builtins.log"; then echo "FAILED: builtins.ijm"; fail=1; fi
	run_one "$here/commands.ijm"
	if ! grep -q '^IWPP-MACRO-TESTS: PASS' "$work/commands.log" || grep -q '^FAIL:' "$work/commands.log"; then
		echo "FAILED: commands.ijm (GUI path)"; fail=1
	fi
	if [ $fail -ne 0 ]; then echo "IWPP macro tests (GUI path): FAILED"; exit 1; fi
	echo "IWPP macro tests (GUI path): all passed"
	exit 0
fi

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

expect_error $here/bad_connectivity.ijm "Fill Holes (IWPP) error: Connectivity 8 is for 2D images"
expect_error $here/bad_sizes.ijm "The marker \"small\" is 8x8x1 but the mask \"large\" is 9x8x1"
expect_error $here/bad_type.ijm "RGB image; IWPP works on 8-bit, 16-bit and 32-bit images"
expect_error $here/bad_backend.ijm "is not a valid choice for backend="
expect_error $here/bad_workers.ijm "IWPP Settings... error: Workers: worker list \"gpu*2,toaster\": cannot read \"toaster\""

bad_choices

run_one "$here/builtins_table.ijm"
if ! grep -q '^IWPP-BUILTINS-TABLE: PASS' "$work/builtins_table.log"; then echo "FAILED: builtins_table.ijm"; fail=1; fi

run_one "$here/batch200.ijm"
log="$work/batch200.log"
if ! grep -q '^IWPP-BATCH200: 400 of 400 results' "$log"; then echo "FAILED: batch200.ijm: not every result was made"; fail=1; fi
lines=$(grep -v -c '^IWPP-BATCH200: ' "$log")
echo "batch200.ijm: $lines Log lines for 200 images (at most 200 allowed)"
if [ "$lines" -gt 200 ]; then echo "FAILED: batch200.ijm: $lines Log lines for 200 images"; fail=1; fi

if [ $fail -ne 0 ]; then echo "IWPP macro tests: FAILED"; exit 1; fi
echo "IWPP macro tests: all passed"
