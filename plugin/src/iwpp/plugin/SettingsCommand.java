/*
 * SettingsCommand.java - "IWPP Settings...": backend, device and CPU threads,
 * kept in ImageJ's preferences (IJ_Prefs.txt keys iwpp.backend, iwpp.device,
 * iwpp.threads). Every command's backend= option overrides the backend.
 *
 * Macro: run("IWPP Settings...", "backend=cpu device=default threads=2");
 */
package iwpp.plugin;

import ij.IJ;
import ij.Prefs;
import ij.plugin.PlugIn;

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
        StringBuilder sb = new StringBuilder();
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
        if (o.error() != null || o.invalidNumber() || !(threads >= 0 && threads <= IwppNative.MAX_THREADS)
                || threads != Math.floor(threads)) {
            IwppRun.error(NAME, o.error() != null ? o.error()
                    : "threads must be a whole number from 0 (all cores) to " + IwppNative.MAX_THREADS + ".");
            return;
        }
        Prefs.set(IwppRun.PREF_BACKEND, backend);
        Prefs.set(IwppRun.PREF_DEVICE, device);
        Prefs.set(IwppRun.PREF_THREADS, (int) threads);
        int[] ctx = IwppRun.resolve(backend);
        IJ.log("IWPP settings: backend " + backend + ", device " + device + ", CPU threads "
                + ((int) threads == 0 ? "all" : String.valueOf((int) threads)) + " (runs on "
                + IwppNative.backendName(ctx[0]) + (ctx[1] != 0 ? " device " + ctx[1] : "") + ")");
    }
}
