// bad_connectivity.ijm - a 2D connectivity on a 3D stack must stop the macro with
// the command's error in the log (and nothing else: no crash, no result image).
installed = call("iwpp.plugin.IwppHeadless.install");
setBatchMode(true);
newImage("stack", "8-bit black", 8, 8, 4);
run("Fill Holes (IWPP)", "connectivity=8 stack=3d");
print("NOT-ABORTED: the macro went on after an error");
