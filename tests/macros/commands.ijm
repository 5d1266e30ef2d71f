// commands.ijm - headless test of every IWPP command on small generated images.
// Each result is compared with a value worked out by hand (comments say why).
// Prints "FAIL: ..." for each mismatch and, only if all checks passed, the line
// "IWPP-MACRO-TESTS: PASS"; run_macro_tests.sh turns that into the exit status.

// Plain ImageJ 1.x cannot build its command table with a headless AWT; this
// builds it (nothing happens in a GUI or in Fiji --headless).
installed = call("iwpp.plugin.IwppHeadless.install");
setBatchMode(true);

var checks = 0;
var failures = 0;
function check(ok, what) {
	checks++;
	if (!ok) { failures++; print("FAIL: " + what); }
}
// (the macro language takes no comparison as a function argument: hence the ifs)
function checkEq(got, want, what) {
	ok = false;
	if (got == want) ok = true;
	check(ok, what + ": got " + got + ", want " + want);
}
function checkNear(got, want, eps, what) {
	ok = false;
	if (abs(got - want) <= eps) ok = true;
	check(ok, what + ": got " + got + ", want " + want);
}
function box(x0, y0, w, h, v) {
	for (y = y0; y < y0 + h; y++) for (x = x0; x < x0 + w; x++) setPixel(x, y, v);
}
function countValue(v) { // over all slices
	n = 0;
	for (z = 1; z <= nSlices; z++) {
		setSlice(z);
		for (y = 0; y < getHeight(); y++) for (x = 0; x < getWidth(); x++) if (getPixel(x, y) == v) n++;
	}
	return n;
}
function checksum() {
	s = 0;
	for (z = 1; z <= nSlices; z++) {
		setSlice(z);
		for (y = 0; y < getHeight(); y++) for (x = 0; x < getWidth(); x++) s += getPixel(x, y) * (1 + x + 3 * y + 7 * z);
	}
	return s;
}

// ---- settings ---------------------------------------------------------------
run("IWPP Settings...", "backend=cpu device=default threads=1");
checkEq(call("ij.Prefs.get", "iwpp.backend", "?"), "cpu", "settings: backend saved");
checkEq(call("ij.Prefs.get", "iwpp.threads", "?"), "1", "settings: threads saved");
run("IWPP Settings...", "backend=auto device=default threads=0");

// ---- Fill Holes (8-bit, calibration kept, input untouched) -------------------
newImage("ring", "8-bit black", 9, 9, 1);
box(1, 1, 7, 7, 255); box(3, 3, 3, 3, 0);            // a square ring around a 3x3 hole
setVoxelSize(0.5, 0.5, 1, "mm");
before = checksum();
run("Fill Holes (IWPP)", "connectivity=4 verbose"); // verbose: the Log says which backend ran
checkEq(getTitle(), "ring-filled", "fill holes: title");
checkEq(countValue(255), 49, "fill holes: 7x7 square filled");
getPixelSize(unit, pw, ph, pd);
checkEq("" + pw + " " + unit, "0.5 mm", "fill holes: calibration kept");
selectImage("ring");
checkEq(checksum(), before, "fill holes: input unchanged");

// ---- Kill Borders -----------------------------------------------------------
newImage("objects", "8-bit black", 12, 10, 1);
box(0, 2, 3, 3, 200);   // touches the left border: removed
box(5, 4, 4, 3, 120);   // inside: kept
run("Kill Borders (IWPP)", "connectivity=8");
checkEq(getTitle(), "objects-killBorders", "kill borders: title");
checkEq(countValue(200), 0, "kill borders: border object removed");
checkEq(countValue(120), 12, "kill borders: inner object kept");

// ---- Morphological Reconstruction, by dilation and by erosion, 8/16/32-bit -----
types = newArray("8-bit", "16-bit", "32-bit");
for (t = 0; t < 3; t++) {
	newImage("mask" + t, "" + types[t] + " black", 16, 12, 1);
	box(1, 1, 5, 5, 100);          // blob A, 25 pixels
	box(9, 3, 4, 6, 100);          // blob B, 24 pixels
	setPixel(6, 6, 100);           // touches A only diagonally
	newImage("seed" + t, "" + types[t] + " black", 16, 12, 1);
	setPixel(2, 2, 255);           // above the mask: clipped to 100
	run("Morphological Reconstruction (IWPP)", "marker=seed" + t + " mask=mask" + t + " connectivity=4 operation=dilation");
	checkEq(getTitle(), "seed" + t + "-rec", "" + types[t] + " reconstruction: title");
	checkEq(countValue(100), 25, "" + types[t] + " reconstruction 4-connected: blob A only");
	run("Morphological Reconstruction (IWPP)", "marker=seed" + t + " mask=mask" + t + " connectivity=8 operation=dilation");
	checkEq(countValue(100), 26, "" + types[t] + " reconstruction 8-connected: blob A and its diagonal pixel");
	selectImage("seed" + t);
	checkEq(getPixel(2, 2), 255, "" + types[t] + " reconstruction: marker unchanged");
}
// by erosion: marker 255 except one background seed; background reached from it
// goes to 0, the hole inside the ring (not reachable) stays 255 = fill holes.
newImage("ringmask", "8-bit black", 9, 9, 1);
box(1, 1, 7, 7, 255); box(3, 3, 3, 3, 0);
newImage("top", "8-bit white", 9, 9, 1);
setPixel(0, 0, 0);
run("Morphological Reconstruction (IWPP)", "marker=top mask=ringmask connectivity=4 operation=erosion");
checkEq(countValue(255), 49, "reconstruction by erosion fills the hole");

// ---- H-Maxima / Regional Maxima (16-bit and 32-bit) ---------------------------
newImage("peaks", "16-bit black", 15, 9, 1);
box(0, 0, 15, 9, 1000);
box(2, 2, 3, 3, 1100);          // a peak 100 high
box(9, 3, 3, 3, 1030);          // a peak 30 high
run("H-Maxima (IWPP)", "h=50 connectivity=8");
checkEq(getTitle(), "peaks-hmax", "h-maxima: title");
checkEq(getPixel(3, 3), 1050, "h-maxima: high peak lowered by h");
checkEq(getPixel(10, 4), 1000, "h-maxima: low peak (30 <= h) flattened");
checkEq(getPixel(0, 0), 1000, "h-maxima: base unchanged");
checkEq(bitDepth(), 16, "h-maxima: 16-bit result");
selectImage("peaks");
run("Regional Maxima (IWPP)", "connectivity=8");
checkEq(bitDepth(), 8, "regional maxima: 8-bit result");
checkEq(countValue(255), 18, "regional maxima: both 3x3 peaks");

newImage("fpeaks", "32-bit black", 11, 7, 1);
box(0, 0, 11, 7, 0.25);
setPixel(2, 3, 1.5);
setPixel(8, 3, 2.5);
run("Regional Maxima (IWPP)", "connectivity=8");
checkEq(countValue(255), 2, "32-bit regional maxima: two single-pixel peaks");
selectImage("fpeaks");
run("Regional Minima (IWPP)", "connectivity=8");
checkEq(countValue(255), 75, "32-bit regional minima: the base plateau");

// ---- H-Minima (8-bit) -------------------------------------------------------
newImage("valleys", "8-bit black", 12, 8, 1);
box(0, 0, 12, 8, 200);
box(2, 2, 2, 2, 100);           // 100 deep
box(8, 3, 2, 2, 190);           // 10 deep
run("H-Minima (IWPP)", "h=20 connectivity=4");
checkEq(getPixel(2, 2), 120, "h-minima: deep valley raised by h");
checkEq(getPixel(8, 3), 200, "h-minima: shallow valley filled");

// ---- Opening / Closing by Reconstruction ---------------------------------------
newImage("squares", "8-bit black", 20, 16, 1);
box(2, 2, 9, 9, 255);           // survives an erosion of radius 2 (5x5)
box(14, 4, 3, 3, 255);          // does not
run("Opening by Reconstruction (IWPP)", "radius=2 connectivity=8");
checkEq(getTitle(), "squares-opening", "opening: title");
checkEq(countValue(255), 81, "opening by reconstruction: big square restored exactly, small one removed");
newImage("holes", "8-bit white", 20, 16, 1);
box(3, 3, 9, 9, 0);
box(14, 5, 2, 2, 0);
run("Closing by Reconstruction (IWPP)", "radius=2 connectivity=8");
checkEq(countValue(0), 81, "closing by reconstruction: small hole closed, big one kept");

// ---- Distance Transform (calibrated, anisotropic; nearest index) -------------
newImage("dots", "8-bit white", 11, 11, 1);
setPixel(5, 5, 0);              // the only background pixel
setVoxelSize(0.5, 2, 1, "mm");
run("Distance Transform (IWPP)", "method=exact nearest");
checkEq(getTitle(), "dots-edt", "edt: title (and the distance map is active)");
checkEq(bitDepth(), 32, "edt: 32-bit");
checkNear(getPixel(8, 5), 1.5, 1e-5, "edt: 3 pixels along x at 0.5 um");
checkNear(getPixel(5, 7), 4, 1e-5, "edt: 2 pixels along y at 2 um");
checkNear(getPixel(5, 5), 0, 0, "edt: background is 0");
checkNear(getPixel(0, 0), sqrt(2.5*2.5 + 10*10), 1e-4, "edt: corner");
getPixelSize(unit, pw, ph, pd);
checkEq("" + pw + " x " + ph, "0.5 x 2", "edt: calibration kept");
selectImage("dots-nearest");
checkEq(getPixel(0, 10), 60, "nearest: index of (5,5) = 5 + 5*11");
selectImage("dots");
run("Distance Transform (IWPP)", "method=danielsson");
checkNear(getPixel(8, 5), 1.5, 1e-5, "danielsson: 3 pixels along x");

// ---- Stacks: 3D versus slice by slice ------------------------------------------
// a hollow cube (shell 1..5 in x, y, z) with a hole in its top face: in 3D its
// inside reaches the outside through that hole (not filled); slice by slice
// every middle slice is a closed ring (filled).
newImage("cube", "8-bit black", 7, 7, 7);
for (z = 1; z <= 5; z++) {
	setSlice(z + 1);
	if (z == 1 || z == 5) box(1, 1, 5, 5, 255); else { box(1, 1, 5, 5, 255); box(2, 2, 3, 3, 0); }
}
setSlice(2); setPixel(3, 3, 0);  // the hole in the top face
setVoxelSize(1, 1, 1.5, "um");
run("Fill Holes (IWPP)", "connectivity=6 stack=3d");
checkEq(nSlices, 7, "3d fill holes: 7 slices");
setSlice(4);
checkEq(getPixel(3, 3), 0, "3d fill holes: open cube not filled");
selectImage("cube");
run("Fill Holes (IWPP)", "connectivity=4 stack=slices");
setSlice(4);
checkEq(getPixel(3, 3), 255, "slice-by-slice fill holes: each ring filled");
setSlice(2);
checkEq(getPixel(3, 3), 255, "slice-by-slice fill holes: the one-pixel hole of the top face is a 2D hole too");
selectImage("cube");
run("Distance Transform (IWPP)", "method=exact stack=3d");
setSlice(4);
checkNear(getPixel(1, 3), 1, 1e-5, "3d edt: face voxel next to the outside along x");
selectImage("cube");
run("Regional Maxima (IWPP)", "connectivity=26 stack=3d backend=cpu");
checkEq(countValue(255), 5*5*5 - 3*3*3 - 1, "3d regional maxima: the shell (less its hole) is one plateau");

print("IWPP macro tests: " + checks + " checks, " + failures + " failures");
if (failures == 0) print("IWPP-MACRO-TESTS: PASS");
