// bad_sizes.ijm - marker and mask of different sizes: the error names both sizes.
installed = call("iwpp.plugin.IwppHeadless.install");
setBatchMode(true);
newImage("small", "8-bit black", 8, 8, 1);
newImage("large", "8-bit black", 9, 8, 1);
run("Morphological Reconstruction (IWPP)", "marker=small mask=large connectivity=8 operation=dilation");
print("NOT-ABORTED: the macro went on after an error");
