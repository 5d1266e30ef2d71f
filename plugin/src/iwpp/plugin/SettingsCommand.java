/*
 * SettingsCommand.java - "IWPP Settings...": backend, device, CPU threads, the
 * GPU memory budget and the workers that share a tiled image, kept in ImageJ's
 * preferences (IJ_Prefs.txt keys iwpp.backend, iwpp.device, iwpp.threads,
 * iwpp.memory_mb, iwpp.workers, iwpp.worker_list). Every command's backend=
 * option overrides the backend; every command uses the rest.
 *
 * Macro: run("IWPP Settings...", "backend=cpu device=default threads=2 memory=0 workers=[this device]");
 *        run("IWPP Settings...", "backend=auto device=default threads=0 memory=4096 workers=[custom list] list=gpu*2,cpu*4");
 * A value that is not valid (a budget below 0, a worker list the library cannot
 * use here) is an error and nothing is saved.
 */
package iwpp.plugin;

import ij.IJ;
import ij.Prefs;
import ij.plugin.PlugIn;

import iwpp.IwppException;
import iwpp.IwppNative;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

public class SettingsCommand implements PlugIn {
    static final String NAME = "IWPP Settings...";

    /** "default" and one label per CUDA and OpenCL device. */
    static String[] deviceLabels() {
        List<String> labels = new ArrayList<String>();
        labels.add(IwppRun.DEFAULT_DEVICE);
        int[] backends = { IwppNative.BACKEND_CUDA, IwppNative.BACKEND_OPENCL };
        String[] names = { "CUDA", "OpenCL" };
        for (int b = 0; b < backends.length; b++) {
            int n = IwppNative.deviceCount(backends[b]);
            for (int i = 0; i < n; i++) {
                long[] num = new long[3];
                try {
                    String[] info = IwppNative.deviceInfo(backends[b], i, num);
                    labels.add(String.format(Locale.US, "%s %d: %s%s (%.1f GB)", names[b], i, info[0],
                            backends[b] == IwppNative.BACKEND_OPENCL ? " [" + info[1] + "]" : "",
                            num[0] / 1e9));
                } catch (RuntimeException e) {
                    labels.add(String.format(Locale.US, "%s %d: (%s)", names[b], i, e.getMessage()));
                }
            }
        }
        return labels.toArray(new String[0]);
    }

    @Override
    public void run(String arg) {
        if (!IwppRun.ready(NAME))
            return;
        String[] devices = deviceLabels();
        String dev = IwppRun.prefDevice();
        boolean known = false;
        for (String d : devices)
            known |= d.equals(dev);
        Options o = new Options("IWPP Settings");
        o.addChoice("Backend", IwppRun.BACKENDS, IwppRun.prefBackend());
        o.addChoice("Device", devices, known ? dev : IwppRun.DEFAULT_DEVICE);
        o.addNumber("Threads (CPU, 0 = all cores)", IwppRun.prefThreads(), 0);
        double mb = IwppRun.prefMemoryMb();
        o.addNumber("Memory budget (MB of GPU memory per call, 0 = all free)", mb, mb == Math.floor(mb) ? 0 : 3);
        o.addChoice("Workers (who shares the tiles of one image)", IwppRun.WORKER_CHOICES, IwppRun.prefWorkers());
        o.addString("List (custom workers, e.g. gpu*2,cpu*4)", IwppRun.prefWorkerList(), 24);
        o.addCheckbox("Verbose (log the timing of every call; off: a status line only)", IwppRun.prefVerbose());
        StringBuilder sb = new StringBuilder();
        sb.append("Images whose working set exceeds the budget run through tiles (same results);\n"
                + "on the CPU backend the budget cuts the image into tiles as well.\n"
                + "Worker items: gpu, cuda:D, opencl:D, all-gpus, cpu, each optionally *N.\n");
        for (int b = IwppNative.BACKEND_CPU; b <= IwppNative.BACKEND_OPENCL; b++) {
            String why = IwppNative.backendUnavailableReason(b);
            sb.append(IwppNative.backendName(b)).append(": ").append(why == null ? "available" : why).append('\n');
        }
        o.addMessage(sb.toString().trim());
        if (!o.show())
            return;
        String backend = o.getNextChoice();
        String device = o.getNextChoice();
        double threads = o.getNextNumber();
        double memoryMb = o.getNextNumber();
        String workers = o.getNextChoice();
        String list = o.getNextString();
        list = list == null ? "" : list.trim();
        boolean verbose = o.getNextBoolean();
        String bad = null;
        if (o.error() != null)
            bad = o.error();
        else if (o.invalidNumber())
            bad = "a number in the dialog is not valid.";
        else if (!(threads >= 0 && threads <= IwppNative.MAX_THREADS) || threads != Math.floor(threads))
            bad = "Threads must be a whole number from 0 (all cores) to " + IwppNative.MAX_THREADS + ".";
        else if (!(memoryMb >= 0 && memoryMb <= IwppRun.MAX_MEMORY_MB))
            bad = "The memory budget must be a budget in MB from 0 (all free GPU memory) upwards, not " + memoryMb + ".";
        else if (workers.equals(IwppRun.WORKER_CHOICES[IwppRun.CUSTOM_WORKERS]) && list.isEmpty())
            bad = "workers=[custom list] needs a list, e.g. list=gpu*2,cpu*4 (items: gpu, cuda:D, opencl:D, "
                    + "all-gpus, cpu, each optionally *N).";
        int[] ctx = IwppRun.resolve(backend, device, (int) threads);
        String spec = IwppRun.workerSpec(workers, list);
        if (bad == null && spec != null) {
            /* the library reads the list now, for this backend and device: a list it cannot use is not saved */
            try {
                IwppNative.checkWorkers(ctx[0], ctx[1], ctx[2], spec);
            } catch (IllegalArgumentException e) {
                bad = "workers: " + e.getMessage();
            } catch (IwppException e) {
                bad = "workers: " + e.getMessage();
            }
        }
        if (bad != null) {
            IwppRun.error(NAME, bad);
            return;
        }
        Prefs.set(IwppRun.PREF_BACKEND, backend);
        Prefs.set(IwppRun.PREF_DEVICE, device);
        Prefs.set(IwppRun.PREF_THREADS, (int) threads);
        Prefs.set(IwppRun.PREF_MEMORY_MB, memoryMb);
        Prefs.set(IwppRun.PREF_WORKERS, workers);
        Prefs.set(IwppRun.PREF_WORKER_LIST, list);
        Prefs.set(IwppRun.PREF_VERBOSE, verbose);
        /* saved all the same (the settings may be meant for another session), but said */
        final String missing = ctx[0] == IwppNative.BACKEND_AUTO ? null : IwppNative.backendUnavailableReason(ctx[0]);
        IJ.log("IWPP settings: backend " + backend + ", device " + device + ", CPU threads "
                + ((int) threads == 0 ? "all" : String.valueOf((int) threads)) + ", memory budget "
                + (memoryMb == 0 ? "all free GPU memory" : IJ.d2s(memoryMb, memoryMb == Math.floor(memoryMb) ? 0 : 3)
                        + " MB" + (ctx[0] == IwppNative.BACKEND_CPU && spec == null
                                ? " (a GPU budget: the CPU backend works in host memory)" : ""))
                + ", workers " + workers + (spec != null ? " (" + spec + ")" : "") + " (runs on "
                + IwppNative.backendName(ctx[0]) + (ctx[1] != 0 ? " device " + ctx[1] : "") + ")"
                + (verbose ? ", verbose log" : ", quiet log") + "."
                + (missing != null ? " Note: " + IwppNative.backendName(ctx[0]) + " is not available on this machine ("
                        + missing + "): commands will stop with that message; backend auto or cpu runs here." : ""));
    }
}
