// batch200.ijm - a batch of 200 images through two IWPP commands with the
// default (quiet) settings: run_macro_tests.sh counts the Log lines (at most
// one per image) and checks that each result was made.
installed = call("iwpp.plugin.IwppHeadless.install");
setBatchMode(true);
made = 0;
for (i = 0; i < 200; i++) {
	newImage("cells " + i + ".tif", "8-bit black", 24, 16, 1);
	setPixel(3 + i % 10, 5, 255);
	for (x = 8; x < 15; x++) for (y = 4; y < 11; y++) setPixel(x, y, 255);
	setPixel(11, 7, 0); // a hole
	run("Fill Holes (IWPP)", "connectivity=4");
	if (getTitle() == "cells " + i + "-filled" && getPixel(11, 7) == 255) made++;
	close();
	run("Distance Transform (IWPP)", "method=exact");
	if (getTitle() == "cells " + i + "-edt") made++;
	close();
	close();
}
print("IWPP-BATCH200: " + made + " of 400 results");
