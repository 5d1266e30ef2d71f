// bad_workers.ijm - a worker list the library cannot read: the macro stops with its message.
installed = call("iwpp.plugin.IwppHeadless.install");
setBatchMode(true);
run("IWPP Settings...", "backend=cpu device=default threads=0 memory=0 workers=[custom list] list=gpu*2,toaster");
print("NOT-ABORTED: the macro went on after an error");
