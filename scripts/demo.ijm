// demo.ijm - the IWPP Fiji/ImageJ plugin on generated images, headless.
// Run by scripts/demo.sh:  ImageJ -batch scripts/demo.ijm "<out dir> [big=8192]"
//
// 1. makes a synthetic nuclei image (bright disks, some hollow, some touching the
//    border, small debris, background noise) and a seeds image;
// 2. runs the IWPP commands a biologist would chain: Fill Holes, Kill Borders,
//    Distance Transform, H-Maxima and Regional Maxima (one seed per nucleus),
//    Morphological Reconstruction, Opening by Reconstruction, Regional Minima,
//    H-Minima, Closing by Reconstruction, and a 3D stack;
// 3. saves every result as TIFF (exact values, calibration kept) and PNG (to
//    look at) in the output folder; the log (which backend ran, timings) goes to
//    standard output (demo.sh keeps a copy in out/demo-log.txt);
// 4. with big=N, times an N x N 8-bit reconstruction and logs the split between
//    the native call and the rest (JNI copies, ImagePlus creation).

// Plain ImageJ 1.x cannot build its command table when AWT is headless; this line
// builds it (it does nothing in the GUI or in Fiji --headless).
installed = call("iwpp.plugin.IwppHeadless.install");
setBatchMode(true);

args = split(getArgument(), " ");
out = args[0];
big = 0;
for (i = 1; i < args.length; i++) if (startsWith(args[i], "big=")) big = parseInt(substring(args[i], 4));
if (out == "") exit("usage: -batch demo.ijm \"<out dir> [big=8192]\"");
File.makeDirectory(out);
if (!endsWith(out, "/")) out = out + "/";

function save(name) {
	saveAs("Tiff", out + name + ".tif");
	rename(name);
	if (bitDepth() == 32) resetMinAndMax();
	saveAs("PNG", out + name + ".png");
	rename(name);
}

// ---- 1. a synthetic nuclei image -------------------------------------------------
w = 768; h = 512;
random("seed", 7);
newImage("nuclei", "8-bit black", w, h, 1);
setVoxelSize(0.325, 0.325, 1, "um");   // a 20x objective
setColor(30);
fillRect(0, 0, w, h);
n = 60;
for (i = 0; i < n; i++) {
	r = 10 + random() * 14;
	x = random() * w; y = random() * h;
	if (i < 4) { x = (i % 2) * w; }    // a few nuclei cut by the border
	setColor(130 + random() * 110);
	fillOval(x - r, y - r, 2 * r, 2 * r);
	if (i % 7 == 3) {                  // a hollow nucleus (a dark nucleolus-like hole)
		setColor(35);
		fillOval(x - r / 3, y - r / 3, 2 * r / 3, 2 * r / 3);
	}
}
for (i = 0; i < 150; i++) {            // debris, 1 to 3 pixels
	setColor(120 + random() * 120);
	fillRect(random() * w, random() * h, 1 + random() * 2, 1 + random() * 2);
}
// camera noise (a loop: ImageJ's own noise command needs a dialog, not headless)
for (y = 0; y < h; y++) for (x = 0; x < w; x++) setPixel(x, y, getPixel(x, y) + round(random("gaussian") * 6));
save("nuclei");

// ---- 2. binary mask, fill holes, kill borders --------------------------------------
// a copy of the nuclei image (imageCalculator works headless; run("Duplicate...") needs the GUI menus)
imageCalculator("Max create", "nuclei", "nuclei");
rename("mask");
selectImage("mask");
changeValues(0, 79, 0);
changeValues(80, 255, 255);
save("mask");

run("Fill Holes (IWPP)", "connectivity=4 verbose");
save("mask-filled");
run("Kill Borders (IWPP)", "connectivity=8 verbose");
save("mask-filled-killBorders");

// ---- 3. distance transform and one seed per nucleus ----------------------------
selectImage("mask-filled");
run("Distance Transform (IWPP)", "method=exact nearest verbose");
save("mask-filled-edt");            // in um (0.325 um pixels)
selectImage("mask-filled-nearest");
save("mask-filled-nearest");
selectImage("mask-filled-edt");
run("H-Maxima (IWPP)", "h=0.65 connectivity=8 verbose");   // ignore ridges lower than 2 pixels
save("mask-filled-edt-hmax");
run("Regional Maxima (IWPP)", "connectivity=8 verbose");
save("seeds");

// ---- 4. reconstruction: the nuclei that hold a seed, and grey-level ops ----------
run("Morphological Reconstruction (IWPP)", "marker=seeds mask=mask-filled connectivity=8 operation=dilation verbose");
save("seeds-rec");
selectImage("nuclei");
run("Opening by Reconstruction (IWPP)", "radius=3 connectivity=8 verbose");   // debris gone, nuclei keep their shape
save("nuclei-opening");
selectImage("nuclei");
run("Closing by Reconstruction (IWPP)", "radius=2 connectivity=8 verbose");
save("nuclei-closing");
selectImage("nuclei");
run("H-Minima (IWPP)", "h=20 connectivity=8 verbose");
save("nuclei-hmin");
run("Regional Minima (IWPP)", "connectivity=8 verbose");
save("nuclei-hmin-rmin");

// ---- 4b. labels: touching nuclei split by the distance watershed, then counted ----------
selectImage("mask-filled");
run("Distance Transform Watershed (IWPP)", "dynamic=0.65 connectivity=8 lines output=auto verbose");
save("mask-filled-dtws");               // one label per nucleus, 0-lines where nuclei touched
print("distance watershed: " + getValue("Max") + " nuclei");
run("Remove Border Labels (IWPP)", "verbose");
save("mask-filled-dtws-noborder");
selectImage("mask-filled");
run("Connected Components Labeling (IWPP)", "mode=binary connectivity=8 output=auto verbose");
save("mask-filled-labels");             // touching nuclei share one label here

// ---- 5. a 3D stack: hollow spheres filled in 3D ------------------------------------
newImage("spheres", "8-bit black", 96, 96, 40);
setVoxelSize(0.5, 0.5, 1.5, "um");
for (z = 1; z <= 40; z++) {
	setSlice(z);
	dz = (z - 20) * 3;                  // 1.5 um slices, 0.5 um pixels
	for (s = 0; s < 2; s++) {
		cx = 30 + s * 36; R = 26 - s * 6;
		if (R * R - dz * dz > 0) {
			rr = sqrt(R * R - dz * dz);
			setColor(200); fillOval(cx - rr, 48 - rr, 2 * rr, 2 * rr);
			if ((R - 6) * (R - 6) - dz * dz > 0) {
				ri = sqrt((R - 6) * (R - 6) - dz * dz);
				setColor(0); fillOval(cx - ri, 48 - ri, 2 * ri, 2 * ri);
			}
		}
	}
}
save("spheres");
run("Fill Holes (IWPP)", "connectivity=6 stack=3d verbose");
save("spheres-filled");
run("Distance Transform (IWPP)", "method=exact stack=3d verbose");
save("spheres-filled-edt");

// ---- 6. the timing bar: a big reconstruction started from a macro -----------------
if (big > 0) {
	// a random maze: half the pixels, at random, are foreground (above the
	// percolation threshold, so one component spans the image)
	newImage("big-mask", "8-bit random", big, big, 1);
	changeValues(0, 127, 0);
	changeValues(128, 255, 200);
	newImage("big-marker", "8-bit black", big, big, 1);
	for (i = 0; i < 64; i++) setPixel(random() * big, random() * big, 255);
	for (rep = 0; rep < 2; rep++) {      // the first run also loads and warms up
		run("Morphological Reconstruction (IWPP)", "marker=big-marker mask=big-mask connectivity=8 operation=dilation verbose");
		close();
	}
}

print("IWPP demo: results in " + out);
