// labels.ijm - headless test of the label and watershed commands (IWPP) on small generated
// images, with the keys GenericDialog records. Each result is compared with values worked out
// by hand (comments say why). Prints "FAIL: ..." per mismatch and, only if every check
// passed, "IWPP-LABELS-MACRO: PASS" (run_macro_tests.sh turns that into the exit status).
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
function box(x0, y0, w, h, v) {
	for (y = y0; y < y0 + h; y++) for (x = x0; x < x0 + w; x++) setPixel(x, y, v);
}
function maxValue() { // over all slices
	m = 0;
	for (z = 1; z <= nSlices; z++) {
		setSlice(z);
		for (y = 0; y < getHeight(); y++) for (x = 0; x < getWidth(); x++) if (getPixel(x, y) > m) m = getPixel(x, y);
	}
	return m;
}
function countValue(v) {
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
function row(values, rows, type) { // an image whose every row is @values
	newImage("row", type + " black", values.length, rows, 1);
	for (y = 0; y < rows; y++) for (x = 0; x < values.length; x++) setPixel(x, y, values[x]);
}
function rowString() { // the first row as "a b c"
	s = "";
	for (x = 0; x < getWidth(); x++) { if (x > 0) s = s + " "; s = s + getPixel(x, 0); }
	return s;
}

// ---- Connected Components Labeling -----------------------------------------------
newImage("blobs", "8-bit black", 10, 8, 1);
box(1, 1, 2, 2, 255);       // A
box(5, 1, 2, 2, 255);       // B
setPixel(3, 3, 255);        // C: touches A only diagonally
setVoxelSize(0.5, 0.5, 1, "mm");
before = checksum();
run("Connected Components Labeling (IWPP)", "mode=binary connectivity=4 output=auto verbose");
checkEq(getTitle(), "blobs-labels", "labeling: title");
checkEq(bitDepth(), 16, "labeling: auto output is 16-bit for 3 labels");
checkEq(maxValue(), 3, "labeling 4-connected: A, B and C");
checkEq("" + getPixel(1, 1) + " " + getPixel(5, 1) + " " + getPixel(3, 3), "1 2 3", "labeling: raster order");
getPixelSize(unit, pw, ph, pd);
checkEq("" + pw + " " + unit, "0.5 mm", "labeling: calibration kept");
selectImage("blobs");
checkEq(checksum(), before, "labeling: input unchanged");
run("Connected Components Labeling (IWPP)", "mode=binary connectivity=8 output=32-bit");
checkEq(bitDepth(), 32, "labeling: 32-bit output");
checkEq("" + getPixel(1, 1) + " " + getPixel(5, 1) + " " + getPixel(3, 3), "1 2 1", "labeling 8-connected: C joins A");

// equal-value: two touching boxes of different values are one object as binary, two by value
newImage("gray", "16-bit black", 8, 4, 1);
box(1, 1, 3, 2, 100);
box(4, 1, 3, 2, 200);
run("Connected Components Labeling (IWPP)", "mode=binary connectivity=4 output=16-bit");
checkEq(maxValue(), 1, "labeling binary: touching boxes are one");
selectImage("gray");
run("Connected Components Labeling (IWPP)", "mode=equal-value connectivity=4 output=16-bit");
checkEq(maxValue(), 2, "labeling equal-value: split by value");

// 3D: a column through 3 slices is one object in 3D and one per slice slice by slice
newImage("column", "8-bit black", 6, 6, 3);
for (z = 1; z <= 3; z++) { setSlice(z); setPixel(2, 2, 255); setPixel(4, 4, 255); }
run("Connected Components Labeling (IWPP)", "mode=binary connectivity=6 output=auto stack=3d");
checkEq(maxValue(), 2, "labeling 3D: two columns");
setSlice(3);
checkEq(getPixel(4, 4), 2, "labeling 3D: the second column in the last slice");
selectImage("column");
run("Connected Components Labeling (IWPP)", "mode=binary connectivity=4 output=auto stack=slices");
checkEq(maxValue(), 2, "labeling slice by slice: numbered per slice");
checkEq(countValue(1), 3, "labeling slice by slice: label 1 in each slice");

// ---- Marker-controlled Watershed ---------------------------------------------------
// a ridge at x=3: both floods reach it at level 3 after a climb from the same level and
// distance; the smaller label takes it, and with lines it is 0 (its neighbour x=4 is lower)
row(newArray(0, 1, 2, 3, 2, 1, 0), 3, "8-bit");
rename("ridge");
row(newArray(1, 0, 0, 0, 0, 0, 2), 3, "32-bit"); // markers in a float image: whole numbers
rename("seeds");
selectImage("ridge");
run("Marker-controlled Watershed (IWPP)", "input=ridge marker=seeds mask=None connectivity=4 output=auto");
checkEq(getTitle(), "ridge-watershed", "watershed: title");
checkEq(rowString(), "1 1 1 1 2 2 2", "watershed: ridge to the smaller label");
run("Marker-controlled Watershed (IWPP)", "input=ridge marker=seeds mask=None connectivity=4 lines output=auto");
checkEq(rowString(), "1 1 1 0 2 2 2", "watershed lines: the ridge is 0");
// a plateau of 5 is split by the number of steps along it
row(newArray(0, 5, 5, 5, 5, 0), 2, "16-bit");
rename("plateau");
row(newArray(1, 0, 0, 0, 0, 2), 2, "8-bit");
rename("plateau seeds");
run("Marker-controlled Watershed (IWPP)", "input=plateau marker=[plateau seeds] mask=None connectivity=8 output=16-bit");
checkEq(rowString(), "1 1 1 2 2 2", "watershed: plateau split in the middle");
// a mask cuts the row at x=3 and leaves out the marker at x=6: the right part has no marker
// inside the mask and stays 0
row(newArray(1, 1, 1, 0, 1, 1, 0), 3, "8-bit");
rename("cut");
run("Marker-controlled Watershed (IWPP)", "input=ridge marker=seeds mask=cut connectivity=4 output=auto");
checkEq(rowString(), "1 1 1 0 0 0 0", "watershed: mask");

// ---- Distance Transform Watershed ---------------------------------------------------
// two discs of radius 9 whose centres are 14 px apart: their centres rise about 3 px above the
// neck, so dynamic=0.5 keeps two objects and dynamic=100 merges them
newImage("discs", "8-bit black", 48, 32, 1);
setColor(255);
makeOval(8, 7, 19, 19); fill();
makeOval(22, 7, 19, 19); fill();
run("Select None");
objects = countValue(255);
run("Distance Transform Watershed (IWPP)", "dynamic=0.5 connectivity=8 output=auto");
checkEq(getTitle(), "discs-dtws", "distance watershed: title");
checkEq(maxValue(), 2, "distance watershed: two discs");
checkEq(countValue(0), 48 * 32 - objects, "distance watershed: every object pixel labelled");
selectImage("discs");
run("Distance Transform Watershed (IWPP)", "dynamic=100 connectivity=8 output=auto");
checkEq(maxValue(), 1, "distance watershed: a large dynamic merges them");
// dynamic in calibrated units: with 0.1 um pixels the centres rise about 0.3 um
selectImage("discs");
setVoxelSize(0.1, 0.1, 1, "um");
run("Distance Transform Watershed (IWPP)", "dynamic=0.05 connectivity=8 output=auto");
checkEq(maxValue(), 2, "distance watershed: dynamic 0.05 um keeps two");
selectImage("discs");
run("Distance Transform Watershed (IWPP)", "dynamic=1 connectivity=8 lines output=auto");
checkEq(maxValue(), 1, "distance watershed: dynamic 1 um merges them");

// ---- Remove Border Labels / Label Size Filtering -------------------------------------
newImage("lab", "16-bit black", 6, 5, 1);
setPixel(0, 1, 1); setPixel(0, 2, 1);                  // 1 touches the left border
setPixel(2, 1, 2); setPixel(3, 1, 2); setPixel(2, 2, 2); // 2: 3 pixels inside
setPixel(4, 2, 3);                                      // 3: 1 pixel inside
setPixel(1, 4, 4); setPixel(2, 4, 4);                  // 4 touches the bottom
run("Remove Border Labels (IWPP)", "verbose");
checkEq(getTitle(), "lab-noborder", "remove border labels: title");
checkEq(countValue(1) + countValue(4), 0, "remove border labels: 1 and 4 removed");
checkEq("" + countValue(2) + " " + countValue(3), "3 1", "remove border labels: 2 and 3 kept");
selectImage("lab");
run("Label Size Filtering (IWPP)", "min=2 max=2");
checkEq(getTitle(), "lab-sized", "size filtering: title");
checkEq("" + countValue(1) + " " + countValue(2) + " " + countValue(3) + " " + countValue(4), "2 0 0 2",
	"size filtering: 2 (3 px) and 3 (1 px) removed");
selectImage("lab");
run("32-bit");
run("Label Size Filtering (IWPP)", "min=2 max=0");
checkEq(bitDepth(), 32, "size filtering: 32-bit labels stay 32-bit");
checkEq("" + countValue(2) + " " + countValue(3), "3 0", "size filtering max=0: no upper limit");

// ---- Impose Minima / Extended Maxima and Minima ----------------------------------------
// [5 3 5 1 5] with a marker at x=1: the basin at x=3 fills to the spill level 6 (5 + 1)
row(newArray(5, 3, 5, 1, 5), 1, "8-bit");
rename("relief");
row(newArray(0, 9, 0, 0, 0), 1, "8-bit");
rename("minmark");
run("Impose Minima (IWPP)", "image=relief marker=minmark connectivity=4");
checkEq(getTitle(), "relief-imposed", "impose minima: title");
checkEq(rowString(), "6 0 6 6 6", "impose minima");

newImage("peaks", "16-bit black", 15, 9, 1);
box(0, 0, 15, 9, 1000);
box(2, 2, 3, 3, 1100);          // a peak 100 high
box(9, 3, 3, 3, 1030);          // a peak 30 high
run("Extended Maxima (IWPP)", "dynamic=50 connectivity=8");
checkEq(getTitle(), "peaks-emax", "extended maxima: title");
checkEq(bitDepth(), 8, "extended maxima: 8-bit result");
checkEq(countValue(255), 9, "extended maxima dynamic 50: the high peak only");
selectImage("peaks");
run("Extended Maxima (IWPP)", "dynamic=20 connectivity=8");
checkEq(countValue(255), 18, "extended maxima dynamic 20: both peaks");
selectImage("peaks");
run("Invert", "");
run("Extended Minima (IWPP)", "dynamic=50 connectivity=8");
checkEq(countValue(255), 9, "extended minima: the deep pit only");

if (failures == 0) print("IWPP-LABELS-MACRO: PASS (" + checks + " checks)");
else print("IWPP-LABELS-MACRO: " + failures + " of " + checks + " checks FAILED");
