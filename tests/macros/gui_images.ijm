// gui_images.ijm - result titles, calibration, LUTs, composite mode and
// hyperstack checks (run_macro_tests.sh runs it on both paths). Prints
// "IWPP-IMAGES: PASS" only if every check passed.
installed = call("iwpp.plugin.IwppHeadless.install");
setBatchMode(true);
var failures = 0;
function checkEq(got, want, what) {
	if (got != want) { failures++; print("FAIL: " + what + ": got " + got + ", expected " + want); }
}
// titles keep spaces and lose the extension
newImage("nuclei control.tif", "8-bit black", 16, 12, 1);
for (x = 2; x < 9; x++) for (y = 2; y < 9; y++) setPixel(x, y, 255);
setPixel(5, 5, 0);
run("Fill Holes (IWPP)", "connectivity=4");
checkEq(getTitle(), "nuclei control-filled", "fill holes title");
// reconstruction: marker = the active image by default, title from the marker,
// calibration from the mask (an uncalibrated seed with a 0.5 micron mask)
newImage("cells", "8-bit black", 16, 12, 1);
for (x = 2; x < 9; x++) for (y = 2; y < 9; y++) setPixel(x, y, 200);
setVoxelSize(0.5, 0.5, 1, "micron");
setMinAndMax(10, 210);
newImage("my marker", "8-bit black", 16, 12, 1);
setPixel(3, 3, 255);
run("Morphological Reconstruction (IWPP)", "mask=cells connectivity=8 operation=dilation");
checkEq(getTitle(), "my marker-rec", "reconstruction title (marker = the active image)");
getPixelSize(unit, pw, ph);
checkEq(unit, "microns", "calibration unit from the mask");
checkEq(pw, 0.5, "pixel width from the mask");
getMinAndMax(lo, hi);
checkEq(lo, 10, "display range from the mask (min)");
checkEq(hi, 210, "display range from the mask (max)");
checkEq(getPixel(5, 5), 200, "reconstruction value");
// a composite input gives a composite result with its mode and LUTs
newImage("two channels", "16-bit composite-mode", 16, 12, 2, 1, 1);
Stack.setDisplayMode("color");
Stack.setChannel(2); run("Magenta"); setMinAndMax(0, 500);
run("H-Maxima (IWPP)", "h=5 connectivity=8");
checkEq(getTitle(), "two channels-hmax", "h-maxima title");
checkEq(is("composite"), 1, "result is composite");
Stack.getDisplayMode(mode);
checkEq(mode, "color", "composite mode kept");
Stack.setChannel(2);
getLut(r, g, b);
checkEq(r[255], 255, "channel 2 LUT kept (red)");
checkEq(g[255], 0, "channel 2 LUT kept (green)");
checkEq(b[255], 255, "channel 2 LUT kept (blue)");
getMinAndMax(lo, hi);
checkEq(lo, 0, "channel 2 display range kept (min)");
checkEq(hi, 500, "channel 2 display range kept (max)");
// +-inf are values like any other: kill borders gives 0 where a pixel equals its
// reconstruction, +inf included (no NaN), and keeps an object off the border
newImage("inf", "32-bit black", 8, 6, 1);
setPixel(0, 0, 1/0); setPixel(1, 0, 1/0); setPixel(4, 3, 1/0); setPixel(0, 5, -1/0);
run("Kill Borders (IWPP)", "connectivity=4");
checkEq(getPixel(0, 0), 0, "kill borders: +inf on the border is removed");
checkEq(getPixel(0, 5), 0, "kill borders: -inf on the border is 0, not NaN");
checkEq(getPixel(4, 3), 1/0, "kill borders: +inf inside is kept");
// an EDT of an image without a zero pixel: all +inf, and the Log says so
newImage("no background", "8-bit white", 8, 6, 1);
run("Distance Transform (IWPP)", "method=exact");
checkEq(getPixel(3, 3), 1/0, "edt without background: +inf");
if (failures == 0) print("IWPP-IMAGES: PASS");
