// bad_backend.ijm - backend=nonsense is not a valid choice: the macro stops with a message.
installed = call("iwpp.plugin.IwppHeadless.install");
setBatchMode(true);
newImage("img", "8-bit black", 8, 8, 1);
run("Kill Borders (IWPP)", "connectivity=8 backend=nonsense");
print("NOT-ABORTED: the macro went on after an error");
