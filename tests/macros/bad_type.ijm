// bad_type.ijm - an RGB image is refused with a sentence saying what to do.
installed = call("iwpp.plugin.IwppHeadless.install");
setBatchMode(true);
newImage("colour", "RGB black", 8, 8, 1);
run("Regional Maxima (IWPP)", "connectivity=8");
print("NOT-ABORTED: the macro went on after an error");
