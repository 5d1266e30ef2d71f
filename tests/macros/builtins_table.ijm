// builtins_table.ijm - headless: after IwppHeadless.install the command table
// holds ImageJ's built-in commands (the ones its menu code adds one by one, not
// only those of IJ_Props.txt), and the ones without a dialog run: open, 8-bit,
// Measure, save, around IWPP commands.
installed = call("iwpp.plugin.IwppHeadless.install");
setBatchMode(true);
var failures = 0;
function checkEq(got, want, what) {
	if (got != want) { failures++; print("FAIL: " + what + ": got " + got + ", expected " + want); }
}
List.setCommands;
checkEq(List.get("Duplicate..."), "ij.plugin.Duplicator", "Duplicate...");
checkEq(List.get("Find Maxima..."), "ij.plugin.filter.MaximumFinder", "Find Maxima...");
checkEq(List.get("8-bit"), "ij.plugin.Converter(\"8-bit\")", "8-bit");
checkEq(List.get("Properties..."), "ij.plugin.filter.ImageProperties", "Properties...");
checkEq(List.get("Measure"), "ij.plugin.filter.Analyzer", "Measure");
checkEq(List.get("Gaussian Blur..."), "ij.plugin.filter.GaussianBlur", "Gaussian Blur...");
checkEq(List.get("Fill Holes (IWPP)"), "iwpp.plugin.FilterCommand(\"fill-holes\")", "Fill Holes (IWPP)");
dir = getDirectory("temp") + "iwpp-table-" + round(random * 1e9) + "/";
File.makeDirectory(dir);
newImage("nuclei control", "16-bit black", 32, 24, 1);
for (x = 4; x < 12; x++) for (y = 4; y < 12; y++) setPixel(x, y, 900);
setPixel(7, 7, 0);
resetMinAndMax();
saveAs("Tiff", dir + "nuclei control.tif");
close();
open(dir + "nuclei control.tif");
run("8-bit");
checkEq(bitDepth(), 8, "8-bit ran");
run("Fill Holes (IWPP)", "connectivity=4");
checkEq(getTitle(), "nuclei control-filled", "fill holes title");
checkEq(getPixel(7, 7), 255, "hole filled");
run("Measure");
checkEq(nResults, 1, "Measure ran");
saveAs("Tiff", dir + "out.tif");
checkEq(File.exists(dir + "out.tif"), 1, "saved");
/* the scratch folder goes again (left behind, one a run piled up in the temp folder) */
checkEq(File.delete(dir + "nuclei control.tif"), 1, "input removed");
checkEq(File.delete(dir + "out.tif"), 1, "result removed");
checkEq(File.delete(dir), 1, "scratch folder removed");
if (failures == 0) print("IWPP-BUILTINS-TABLE: PASS");
