// tiles.ijm - headless test of the tile settings of "IWPP Settings...": a GPU
// memory budget and a worker list, set through run() as a macro would, must
// give results equal, pixel for pixel, to the default run. Prints "FAIL: ..."
// for each mismatch and, only if all checks passed, "IWPP-TILES-MACRO: PASS";
// run_macro_tests.sh also checks that the log reports tiles.

installed = call("iwpp.plugin.IwppHeadless.install");
setBatchMode(true);

var checks = 0;
var failures = 0;
function check(ok, what) {
	checks++;
	if (!ok) { failures++; print("FAIL: " + what); }
}
function checkEq(got, want, what) {
	ok = false;
	if (got == want) ok = true;
	check(ok, what + ": got " + got + ", want " + want);
}
// pixels where two images of the same size differ (all slices)
function differences(a, b) {
	n = 0;
	selectImage(a); w = getWidth(); h = getHeight(); d = nSlices;
	for (z = 1; z <= d; z++) {
		selectImage(a); setSlice(z);
		va = newArray(w * h);
		for (y = 0; y < h; y++) for (x = 0; x < w; x++) va[x + y * w] = getPixel(x, y);
		selectImage(b); setSlice(z);
		for (y = 0; y < h; y++) for (x = 0; x < w; x++) if (getPixel(x, y) != va[x + y * w]) n++;
	}
	return n;
}
// a one-pixel corridor of random levels (40..255) winding from (0,0) to the
// centre between walls of lower random levels (0..29): values must travel
// through every tile many times
function spiral(w, h) {
	for (y = 0; y < h; y++) for (x = 0; x < w; x++) setPixel(x, y, floor(random() * 30));
	x0 = 0; y0 = 0; x1 = w - 1; y1 = h - 1;
	while (x0 <= x1 && y0 <= y1) {
		for (x = x0; x <= x1; x++) setPixel(x, y0, 40 + floor(random() * 216));
		for (y = y0; y <= y1; y++) setPixel(x1, y, 40 + floor(random() * 216));
		if (y1 > y0) for (x = x1; x >= x0; x--) setPixel(x, y1, 40 + floor(random() * 216));
		if (x1 > x0) for (y = y1; y >= y0 + 2; y--) setPixel(x0, y, 40 + floor(random() * 216));
		if (y0 + 2 <= y1 && x0 + 1 <= x1) setPixel(x0 + 1, y0 + 2, 40 + floor(random() * 216));
		x0 += 2; y0 += 2; x1 -= 2; y1 -= 2;
	}
}

random("seed", 11);
newImage("maze", "8-bit black", 120, 80, 1);
spiral(120, 80);
newImage("seed", "8-bit black", 120, 80, 1);
setPixel(0, 0, 255);
newImage("maze16", "16-bit black", 61, 47, 3);   // a 3D stack whose sizes are no multiple of a tile
for (z = 1; z <= 3; z++) { setSlice(z); spiral(61, 47); }
run("Multiply...", "value=200 stack");

// ---- the default run (whole image in memory) ---------------------------------
run("IWPP Settings...", "backend=cpu device=default threads=0 memory=0 workers=[this device]");
checkEq(parseFloat(call("ij.Prefs.get", "iwpp.memory_mb", "?")), 0, "settings: budget 0 saved");
checkEq(call("ij.Prefs.get", "iwpp.workers", "?"), "this device", "settings: default workers saved");
run("Morphological Reconstruction (IWPP)", "marker=seed mask=maze connectivity=8 operation=dilation");
rename("rec-default");
selectImage("maze");
run("Fill Holes (IWPP)", "connectivity=4");
rename("fill-default");
selectImage("maze16");
run("H-Maxima (IWPP)", "h=3000 connectivity=26 stack=3d");
rename("hmax-default");

// ---- a tiny budget (0.02 MB, about 21000 bytes) and three CPU workers -------------
run("IWPP Settings...", "backend=cpu device=default threads=0 memory=0.02 workers=[custom list] list=cpu*3 verbose");
checkEq(parseFloat(call("ij.Prefs.get", "iwpp.memory_mb", "?")), 0.02, "settings: budget saved");
checkEq(call("ij.Prefs.get", "iwpp.workers", "?"), "custom list", "settings: worker choice saved");
checkEq(call("ij.Prefs.get", "iwpp.worker_list", "?"), "cpu*3", "settings: worker list saved");
run("Morphological Reconstruction (IWPP)", "marker=seed mask=maze connectivity=8 operation=dilation");
rename("rec-tiles");
checkEq(differences("rec-default", "rec-tiles"), 0, "reconstruction: tiles and cpu*3 = default");
selectImage("maze");
run("Fill Holes (IWPP)", "connectivity=4");
rename("fill-tiles");
checkEq(differences("fill-default", "fill-tiles"), 0, "fill holes: tiles and cpu*3 = default");
selectImage("maze16");
run("H-Maxima (IWPP)", "h=3000 connectivity=26 stack=3d");
rename("hmax-tiles");
checkEq(differences("hmax-default", "hmax-tiles"), 0, "3D h-maxima: tiles and cpu*3 = default");

// ---- one of the named choices: two workers on this device, 1 MB ------------------
run("IWPP Settings...", "backend=cpu device=default threads=0 memory=1 workers=[this device, 2 streams] verbose");
checkEq(call("ij.Prefs.get", "iwpp.workers", "?"), "this device, 2 streams", "settings: named choice saved");
selectImage("maze");
run("Fill Holes (IWPP)", "connectivity=4");
rename("fill-2");
checkEq(differences("fill-default", "fill-2"), 0, "fill holes: 2 workers = default");

// ---- the inputs are untouched; back to the defaults ------------------------------
selectImage("seed");
checkEq(getPixel(0, 0) + getPixel(1, 0), 255, "the marker is unchanged");
run("IWPP Settings...", "backend=auto device=default threads=0 memory=0 workers=[this device]");

print("IWPP tiles macro tests: " + checks + " checks, " + failures + " failures");
if (failures == 0) print("IWPP-TILES-MACRO: PASS");
