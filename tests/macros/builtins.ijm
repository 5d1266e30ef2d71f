// builtins.ijm - a realistic batch macro: ImageJ's own commands (open,
// Properties..., Duplicate..., 8-bit, Gaussian Blur..., Find Maxima...,
// Convert to Mask, Measure, Tiff save) around IWPP commands. Plain headless
// ImageJ runs it after IwppHeadless.install; its own dialog commands need a
// display in plain ImageJ 1.x, so run_macro_tests.sh runs this one under Xvfb
// (without a display it checks that the command table has them).
installed = call("iwpp.plugin.IwppHeadless.install");
setBatchMode(true);
var failures = 0;
function checkEq(got, want, what) {
	if (got != want) { failures++; print("FAIL: " + what + ": got " + got + ", expected " + want); }
}
dir = getDirectory("temp") + "iwpp-builtins-" + round(random * 1e9) + "/";
File.makeDirectory(dir);
for (i = 0; i < 3; i++) {
	newImage("nuclei control " + i, "16-bit black", 64, 48, 1);
	makeOval(10 + i, 10, 12, 12); run("Set...", "value=1000");
	makeRectangle(40, 20, 10, 14); run("Set...", "value=800");
	makeRectangle(44, 25, 2, 2); run("Set...", "value=0"); // a hole in the rectangle
	run("Select None");
	resetMinAndMax();
	run("Properties...", "channels=1 slices=1 frames=1 pixel_width=0.5 pixel_height=0.5 voxel_depth=1 unit=micron");
	saveAs("Tiff", dir + "nuclei control " + i + ".tif");
	close();
}
list = getFileList(dir);
for (k = 0; k < list.length; k++) {
	open(dir + list[k]);
	name = getTitle();
	base = replace(name, ".tif", "");
	run("Duplicate...", "title=[" + base + " copy]");
	run("8-bit");
	run("Gaussian Blur...", "sigma=1");
	copy = getTitle();
	run("Find Maxima...", "prominence=10 output=[Single Points]");
	getHistogram(values, counts, 256);
	checkEq(counts[255], 2, name + ": Find Maxima: one maximum per object");
	close();
	selectImage(copy);
	setThreshold(1, 255);
	run("Convert to Mask");
	run("Fill Holes (IWPP)", "connectivity=4");
	checkEq(getTitle(), base + " copy-filled", name + ": fill holes title");
	getPixelSize(unit, pw, ph);
	checkEq(unit, "microns", name + ": unit kept");
	checkEq(pw, 0.5, name + ": pixel width kept");
	run("Distance Transform (IWPP)", "method=exact");
	checkEq(getTitle(), base + " copy-filled-edt", name + ": distance map title");
	run("Set Measurements...", "area mean min redirect=None decimal=3");
	run("Measure");
	checkEq(getResult("Area", nResults - 1), 64 * 48 * 0.25, name + ": measured area in micron^2");
	saveAs("Tiff", dir + "out " + k + ".tif");
	checkEq(File.exists(dir + "out " + k + ".tif"), 1, name + ": result saved");
	run("Close All");
}
/* the scratch folder goes again (left behind, one a run piled up in the temp folder) */
list = getFileList(dir);
for (k = 0; k < list.length; k++)
	checkEq(File.delete(dir + list[k]), 1, "removing " + list[k]);
checkEq(File.delete(dir), 1, "removing the scratch folder");
if (failures == 0) print("IWPP-BUILTINS: PASS");
