/*
 * IwppRun.java - what every IWPP command shares: the settings (Prefs), the
 * backend/stack/connectivity options, cutting an image into the volumes the
 * library is called on, progress, timing, logging, the result image and errors.
 */
package iwpp.plugin;

import ij.IJ;
import ij.ImagePlus;
import ij.ImageStack;
import ij.Macro;
import ij.Prefs;
import ij.WindowManager;
import ij.macro.Interpreter;

import iwpp.IwppException;
import iwpp.IwppNative;

import java.awt.GraphicsEnvironment;
import java.util.Locale;

final class IwppRun {
    static final String[] BACKENDS = { "auto", "cpu", "cuda", "opencl" };
    static final String[] STACK_MODES = { "slices", "3d" };
    static final String[] CONNECTIVITIES = { "4", "8", "6", "18", "26" };

    static final String PREF_BACKEND = "iwpp.backend";
    static final String PREF_DEVICE = "iwpp.device";
    static final String PREF_THREADS = "iwpp.threads";
    static final String DEFAULT_DEVICE = "default";

    private static boolean announced;

    private IwppRun() {
    }

    /* ---------------------------------------------------------- settings */

    static String prefBackend() {
        String b = Prefs.get(PREF_BACKEND, "auto");
        return IwppNative.backendFromName(b) < 0 ? "auto" : b;
    }

    static String prefDevice() {
        return Prefs.get(PREF_DEVICE, DEFAULT_DEVICE);
    }

    /** The saved thread count, clamped to [0, MAX_THREADS] (a hand-edited or old pref must not reach libgomp). */
    static int prefThreads() {
        double t = Prefs.get(PREF_THREADS, 0);
        if (!(t >= 0)) // negative or NaN
            return 0;
        return (int) Math.min(t, IwppNative.MAX_THREADS);
    }

    /** The (backend, device, threads) triple for a backend name and the saved device and threads. */
    static int[] resolve(String backendName) {
        int backend = IwppNative.backendFromName(backendName);
        int device = 0;
        String dev = prefDevice();
        /* device labels look like "CUDA 0: name (80.0 GB)" or "OpenCL 1: name [platform] (…)" */
        int devBackend = dev.startsWith("CUDA ") ? IwppNative.BACKEND_CUDA
                : dev.startsWith("OpenCL ") ? IwppNative.BACKEND_OPENCL : -1;
        if (devBackend >= 0) {
            int colon = dev.indexOf(':');
            try {
                int idx = Integer.parseInt(dev.substring(dev.indexOf(' ') + 1, colon).trim());
                if (backend == IwppNative.BACKEND_AUTO)
                    backend = devBackend;
                if (backend == devBackend)
                    device = idx;
            } catch (RuntimeException e) {
                /* a label saved by another version: keep device 0 */
            }
        }
        return new int[] { backend, device, prefThreads() };
    }

    /* ---------------------------------------------------- dialog helpers */

    static boolean isStack(ImagePlus imp) {
        return imp.getStackSize() > 1;
    }

    /** Whether the default stack mode of this image is 3D (a z-stack). */
    static boolean default3d(ImagePlus imp) {
        return imp.getNSlices() > 1;
    }

    static void addConnectivity(Options o, ImagePlus imp, boolean backgroundDefault) {
        boolean d3 = default3d(imp);
        String def = backgroundDefault ? (d3 ? "6" : "4") : (d3 ? "26" : "8");
        o.addChoice("Connectivity", CONNECTIVITIES, def);
    }

    /** Adds "stack" (only for stacks) and "backend". Read back with readCommon. */
    static void addCommon(Options o, ImagePlus imp) {
        if (isStack(imp))
            o.addChoice("Stack", STACK_MODES, default3d(imp) ? "3d" : "slices");
        o.addChoice("Backend", BACKENDS, prefBackend());
    }

    /** Reads what addCommon added: {stack3d (0/1), backend index}. */
    static int[] readCommon(Options o, ImagePlus imp) {
        int stack3d = 0;
        if (isStack(imp))
            stack3d = "3d".equals(o.getNextChoice()) ? 1 : 0;
        int backend = IwppNative.backendFromName(o.getNextChoice());
        return new int[] { stack3d, backend };
    }

    /** null if the connectivity fits the mode, else a sentence saying what to use. */
    static String checkConnectivity(int conn, boolean threeD) {
        if (threeD && (conn == 4 || conn == 8))
            return "connectivity=" + conn + " is for 2D images; with stack=3d use 6, 18 or 26 "
                    + "(or stack=slices to work slice by slice).";
        return null;
    }

    /* ------------------------------------------------------ image helpers */

    /** null if the image can be processed, else why not. */
    static String checkType(ImagePlus imp) {
        int bd = imp.getBitDepth();
        if (bd == 8 || bd == 16 || bd == 32)
            return null;
        return "\"" + imp.getTitle() + "\" is " + (bd == 24 ? "an RGB" : bd + "-bit")
                + " image; IWPP works on 8-bit, 16-bit and 32-bit images (Image>Type to convert).";
    }

    /**
     * The groups of stack indices (1-based) the library is called on: one per
     * plane, or in 3D one z-series per channel and frame.
     */
    static int[][] volumes(ImagePlus imp, boolean threeD) {
        int n = imp.getStackSize();
        int nc = imp.getNChannels(), nz = imp.getNSlices(), nt = imp.getNFrames();
        if (nc * nz * nt != n) {
            nc = 1;
            nz = n;
            nt = 1;
        }
        if (!threeD || nz == 1) {
            int[][] v = new int[n][];
            for (int i = 0; i < n; i++)
                v[i] = new int[] { i + 1 };
            return v;
        }
        int[][] v = new int[nc * nt][];
        int k = 0;
        for (int t = 1; t <= nt; t++)
            for (int c = 1; c <= nc; c++) {
                int[] idx = new int[nz];
                for (int z = 1; z <= nz; z++)
                    idx[z - 1] = (t - 1) * nz * nc + (z - 1) * nc + c; /* ImageJ order: c, z, t */
                v[k++] = idx;
            }
        return v;
    }

    /** The pixel arrays of some stack slices (not copies). */
    static Object[] slices(ImageStack stack, int[] idx) {
        Object[] s = new Object[idx.length];
        for (int i = 0; i < idx.length; i++)
            s[i] = stack.getPixels(idx[i]);
        return s;
    }

    /** New zeroed pixel arrays of the given bit depth, as many as @p n. */
    static Object[] newSlices(int bitDepth, int n, int size) {
        Object[] s = bitDepth == 8 ? new byte[n][] : bitDepth == 16 ? new short[n][] : new float[n][];
        for (int i = 0; i < n; i++)
            s[i] = bitDepth == 8 ? new byte[size] : bitDepth == 16 ? (Object) new short[size] : new float[size];
        return s;
    }

    /** Copies of pixel arrays. */
    static Object[] copies(Object[] src) {
        Object[] s = src[0] instanceof byte[] ? new byte[src.length][]
                : src[0] instanceof short[] ? new short[src.length][] : new float[src.length][];
        for (int i = 0; i < src.length; i++) {
            Object p = src[i];
            s[i] = p instanceof byte[] ? ((byte[]) p).clone()
                    : p instanceof short[] ? (Object) ((short[]) p).clone() : ((float[]) p).clone();
        }
        return s;
    }

    /** A result image with the dimensions, calibration and slice labels of @p like. */
    static ImagePlus result(ImagePlus like, String suffix, ImageStack stack) {
        for (int i = 1; i <= stack.getSize() && i <= like.getStackSize(); i++)
            stack.setSliceLabel(like.getStack().getSliceLabel(i), i);
        ImagePlus out = new ImagePlus(like.getShortTitle() + "-" + suffix, stack);
        if (like.getStackSize() == stack.getSize())
            out.setDimensions(like.getNChannels(), like.getNSlices(), like.getNFrames());
        if (like.isHyperStack())
            out.setOpenAsHyperStack(true);
        out.setCalibration(like.getCalibration().copy());
        return out;
    }

    /** Opens a result: a window, or the batch-mode/headless image list; it becomes the active image. */
    static void show(ImagePlus out) {
        if (out.getBitDepth() != 8)
            out.resetDisplayRange();
        if (GraphicsEnvironment.isHeadless() && !Interpreter.isBatchMode()) {
            WindowManager.setTempCurrentImage(out);
            return;
        }
        out.show();
    }

    /* ------------------------------------------------------- the runner */

    /** One call of the library on one volume. */
    interface VolumeOp {
        void run(int[] ctx, int[] stackIndices, int slot) throws RuntimeException;
    }

    /** Timings of a command. */
    static final class Timing {
        final long start = System.nanoTime();
        double nativeMs, contextMs, copyMs;
        String backend = "?", variant = "";

        void add() {
            double[] s = IwppNative.lastStats();
            if (s == null)
                return;
            nativeMs += s[IwppNative.STAT_TOTAL_MS];
            contextMs += s[IwppNative.STAT_CONTEXT_MS];
            copyMs += s[IwppNative.STAT_COPY_MS];
            backend = IwppNative.backendName((int) s[IwppNative.STAT_BACKEND]);
            variant = IwppNative.lastVariant();
        }

        double totalMs() {
            return (System.nanoTime() - start) / 1e6;
        }
    }

    /** Loads the native library (logging where from, once); false with an error shown if it cannot. */
    static boolean ready(String command) {
        try {
            IwppNative.requireLoaded();
        } catch (IwppException e) {
            error(command, e.getMessage());
            return false;
        }
        if (!announced) {
            announced = true;
            StringBuilder sb = new StringBuilder("IWPP " + IwppNative.version() + " ("
                    + IwppNative.libraryLocation() + "); backends:");
            for (int b = IwppNative.BACKEND_CPU; b <= IwppNative.BACKEND_OPENCL; b++) {
                String why = IwppNative.backendUnavailableReason(b);
                sb.append(' ').append(IwppNative.backendName(b)).append(why == null ? " yes" : " no (" + why + ")");
                sb.append(b < IwppNative.BACKEND_OPENCL ? "," : "");
            }
            IJ.log(sb.toString());
        }
        return true;
    }

    /**
     * Runs @p op on every volume with progress and status, then logs what ran and
     * the timing split. With backend auto, a GPU that runs out of memory or fails
     * is retried once on the CPU. Returns the timing, or null after showing an error.
     */
    static Timing runVolumes(String command, int backendIndex, int[][] volumes, VolumeOp op) {
        Timing t = new Timing();
        int[] ctx = resolve(BACKENDS[backendIndex]);
        int n = volumes.length;
        try {
            for (int i = 0; i < n; i++) {
                IJ.showStatus(command + ": " + (n > 1 ? (i + 1) + "/" + n : "running") + " ("
                        + IwppNative.backendName(ctx[0]) + ")");
                IJ.showProgress(i, n);
                try {
                    op.run(ctx, volumes[i], i);
                } catch (IwppException e) {
                    /* auto may have picked a GPU: one retry on the CPU for memory or device trouble */
                    boolean retry = backendIndex == IwppNative.BACKEND_AUTO && ctx[0] != IwppNative.BACKEND_CPU
                            && (e.getStatus() == IwppNative.ENOMEM || e.getStatus() == IwppNative.EDEVICE);
                    if (!retry)
                        throw e;
                    IJ.log(command + ": " + e.getMessage() + " - running on the CPU instead.");
                    ctx = new int[] { IwppNative.BACKEND_CPU, 0, ctx[2] };
                    op.run(ctx, volumes[i], i);
                }
                t.add();
            }
        } catch (IllegalArgumentException e) {
            error(command, e.getMessage());
            return null;
        } catch (IwppException e) {
            error(command, e.getMessage());
            return null;
        } catch (RuntimeException e) {
            error(command, "internal error, please report it: " + e);
            return null;
        } catch (OutOfMemoryError e) {
            error(command, "Java ran out of memory (" + e.getMessage() + "); raise the memory limit "
                    + "(Edit>Options>Memory & Threads).");
            return null;
        } finally {
            IJ.showProgress(1.0);
        }
        return t;
    }

    /**
     * Logs which backend ran and where the time went: the library's operation
     * (native), the one-time native context set-up, the JNI pixel copies, and
     * the rest (Java stacks and ImagePlus, showing it, argument checks).
     */
    static void logDone(String command, ImagePlus in, Timing t, String what) {
        double total = t.totalMs();
        double other = total - t.nativeMs - t.contextMs - t.copyMs;
        double outside = total > 0 ? 100.0 * (total - t.nativeMs) / total : 0;
        String msg = String.format(Locale.US,
                "%s: %s (%dx%dx%d %d-bit)%s - backend %s%s; total %.1f ms = native %.1f + context %.1f"
                        + " + JNI copies %.1f + other %.1f ms (%.1f%% outside the native operation)",
                command, in.getTitle(), in.getWidth(), in.getHeight(), in.getStackSize(), in.getBitDepth(),
                what.isEmpty() ? "" : ", " + what, t.backend, t.variant.isEmpty() ? "" : " (" + t.variant + ")",
                total, t.nativeMs, t.contextMs, t.copyMs, other, outside);
        IJ.log(msg);
        IJ.showStatus(String.format(Locale.US, "%s: %.0f ms on %s", command, total, t.backend));
    }

    /**
     * Shows an error: a dialog in the GUI, the log when headless or in batch
     * mode. A running macro is aborted so a batch job does not go on with the
     * wrong image.
     */
    static void error(String command, String message) {
        String msg = message == null || message.isEmpty() ? "unknown error" : message;
        if (GraphicsEnvironment.isHeadless() || Interpreter.isBatchMode()) {
            IJ.log(command + " error: " + msg);
            if (IJ.isMacro() || Macro.getOptions() != null)
                Interpreter.abort(); // stops the macro (as a macro error would)
        } else {
            IJ.error(command, msg);
        }
    }
}
