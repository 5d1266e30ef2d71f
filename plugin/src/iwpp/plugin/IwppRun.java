/*
 * IwppRun.java - what every IWPP command shares: the settings (Prefs), the
 * backend/stack/connectivity options, cutting an image into the volumes the
 * library is called on, progress and cancelling (Esc), timing, logging, the
 * result image and errors.
 */
package iwpp.plugin;

import ij.IJ;
import ij.ImagePlus;
import ij.CompositeImage;
import ij.ImageStack;
import ij.Macro;
import ij.Prefs;
import ij.WindowManager;
import ij.macro.Interpreter;
import ij.measure.Calibration;
import ij.plugin.frame.Recorder;
import ij.process.LUT;

import iwpp.IwppCancelledException;
import iwpp.IwppException;
import iwpp.IwppNative;

import java.awt.GraphicsEnvironment;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

final class IwppRun {
    static final String[] BACKENDS = { "auto", "cpu", "cuda", "opencl" };
    static final String[] STACK_MODES = { "slices", "3d" };
    static final String[] CONNECTIVITIES = { "4", "8", "6", "18", "26" };

    static final String PREF_BACKEND = "iwpp.backend";
    static final String PREF_DEVICE = "iwpp.device";
    static final String PREF_THREADS = "iwpp.threads";
    static final String PREF_MEMORY_MB = "iwpp.memory_mb";
    static final String PREF_WORKERS = "iwpp.workers";
    static final String PREF_WORKER_LIST = "iwpp.worker_list";
    static final String PREF_VERBOSE = "iwpp.verbose";
    /** Largest radius of the opening/closing by reconstruction, in pixels (the library's cap). */
    static final int MAX_RADIUS = 100000;
    static final String DEFAULT_DEVICE = "default";

    /** Worker choices of IWPP Settings and their lists (iwpp_context_set_workers); the last is "custom list". */
    static final String[] WORKER_CHOICES = { "this device", "this device, 2 streams", "all GPUs", "all GPUs + CPU",
            "this GPU + CPU", "custom list" };
    static final String[] WORKER_SPECS = { null, "gpu*2", "all-gpus", "all-gpus,cpu", "gpu,cpu", null };
    static final int CUSTOM_WORKERS = WORKER_CHOICES.length - 1;
    /** Largest budget accepted, in MB (2^40 MB = 1 EB: a typo, not a GPU). */
    static final double MAX_MEMORY_MB = 1099511627776.0;

    private static boolean announced;
    /** Commands whose GPU backend lacked the operation (logged once, then run on the CPU quietly). */
    private static final java.util.Set<String> unsupportedSaid =
            java.util.Collections.synchronizedSet(new java.util.HashSet<String>());
    private static volatile boolean gpuUsed; // a GPU backend ran once in this process (kernels are built)

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

    /** The saved GPU memory budget in MB (0 = all free memory); a bad saved value reads as 0. */
    static double prefMemoryMb() {
        double mb = Prefs.get(PREF_MEMORY_MB, 0);
        return mb >= 0 && mb <= MAX_MEMORY_MB ? mb : 0;
    }

    static long megabytesToBytes(double mb) {
        return Math.round(mb * 1048576.0);
    }

    /** The saved worker choice (one of WORKER_CHOICES). */
    static String prefWorkers() {
        String w = Prefs.get(PREF_WORKERS, WORKER_CHOICES[0]);
        for (String c : WORKER_CHOICES)
            if (c.equals(w))
                return c;
        return WORKER_CHOICES[0];
    }

    static String prefWorkerList() {
        return Prefs.get(PREF_WORKER_LIST, "");
    }

    /** Whether every call logs its timing breakdown (IWPP Settings "verbose"); quiet by default. */
    static boolean prefVerbose() {
        return Prefs.get(PREF_VERBOSE, false);
    }

    /** The worker list (null = this device alone) of a choice and a custom list. */
    static String workerSpec(String choice, String customList) {
        for (int i = 0; i < WORKER_CHOICES.length; i++)
            if (WORKER_CHOICES[i].equals(choice))
                return i == CUSTOM_WORKERS ? (customList == null || customList.trim().isEmpty() ? null
                        : customList.trim()) : WORKER_SPECS[i];
        return null;
    }

    /** What one library call runs on: the context's settings, the tile settings, and a listener. */
    static final class Ctx {
        final int backend, device, threads;
        final long memoryLimit; // bytes, 0 = the device's free memory
        final String workers;   // null = this device alone
        IwppNative.Progress progress;

        Ctx(int backend, int device, int threads, long memoryLimit, String workers) {
            this.backend = backend;
            this.device = device;
            this.threads = threads;
            this.memoryLimit = memoryLimit;
            this.workers = workers;
        }
    }

    /** The settings of a run: a backend name and the saved device, threads, budget and workers. */
    static Ctx settings(String backendName) {
        int[] c = resolve(backendName);
        return new Ctx(c[0], c[1], c[2], megabytesToBytes(prefMemoryMb()),
                workerSpec(prefWorkers(), prefWorkerList()));
    }

    /** The (backend, device, threads) triple for a backend name and the saved device and threads. */
    static int[] resolve(String backendName) {
        return resolve(backendName, prefDevice(), prefThreads());
    }

    /** The (backend, device, threads) triple for a backend name, a device label and a thread count. */
    static int[] resolve(String backendName, String dev, int threads) {
        int backend = IwppNative.backendFromName(backendName);
        int device = 0;
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
        /* "automatic" (0) lets the library choose per call (small images sequential, busy cores
           left alone); ImageJ's own setting (Edit > Options > Memory & Threads) caps it when the
           user lowered it below the cores */
        if (threads <= 0 && ij.Prefs.getThreads() < Runtime.getRuntime().availableProcessors())
            threads = ij.Prefs.getThreads();
        return new int[] { backend, device, threads };
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

    /**
     * Adds "stack" (only for stacks), "backend" (recorded only when the user
     * picks another one than the saved setting) and "verbose". Read back with
     * readCommon.
     */
    static void addCommon(Options o, ImagePlus imp) {
        addStackBackendVerbose(o, isStack(imp), default3d(imp) ? "3d" : "slices");
    }

    static void addStackBackendVerbose(Options o, boolean stack, String stackDefault) {
        if (stack)
            o.addChoice("Stack", STACK_MODES, stackDefault);
        o.addChoice("Backend", BACKENDS, prefBackend(), true);
        o.addCheckbox("Verbose (log the timing of this call)", prefVerbose());
    }

    /** Reads what addCommon added: {stack3d (0/1), backend index, verbose (0/1)}. */
    static int[] readCommon(Options o, ImagePlus imp) {
        return readStackBackendVerbose(o, isStack(imp));
    }

    static int[] readStackBackendVerbose(Options o, boolean stack) {
        int stack3d = 0;
        if (stack)
            stack3d = "3d".equals(o.getNextChoice()) ? 1 : 0;
        int backend = Math.max(0, IwppNative.backendFromName(o.getNextChoice()));
        /* a macro without "verbose" still follows the saved setting */
        boolean verbose = o.getNextBoolean() || (o.fromMacro() && prefVerbose());
        return new int[] { stack3d, backend, verbose ? 1 : 0 };
    }

    /** null if the connectivity fits the image and the mode, else a sentence saying what to use. */
    static String checkConnectivity(int conn, boolean threeD, ImagePlus imp) {
        if (threeD && (conn == 4 || conn == 8))
            return "Connectivity " + conn + " is for 2D images; to process \"" + imp.getTitle()
                    + "\" as a 3D volume (stack=3d) use 6, 18 or 26, or use stack=slices to work slice by slice.";
        if (!threeD && (conn == 6 || conn == 18 || conn == 26))
            return "Connectivity " + conn + " is for 3D volumes, but \"" + imp.getTitle() + "\" is "
                    + (imp.getNSlices() > 1 ? "processed slice by slice (stack=slices)" : "a 2D image")
                    + "; use 4 or 8" + (imp.getNSlices() > 1 ? ", or stack=3d." : ".");
        return null;
    }

    /** null if a 32-bit image has no NaN pixel, else where the first one is (1-based slice). */
    static String checkNaN(ImagePlus imp) {
        if (imp.getBitDepth() != 32)
            return null;
        ImageStack st = imp.getStack();
        int w = imp.getWidth();
        for (int s = 1; s <= st.getSize(); s++) {
            float[] px = (float[]) st.getPixels(s);
            for (int i = 0; i < px.length; i++)
                if (Float.isNaN(px[i]))
                    return "\"" + imp.getTitle() + "\" has a NaN pixel at x=" + (i % w) + ", y=" + (i / w)
                            + (st.getSize() > 1 ? " in slice " + s : "")
                            + "; replace NaN first (Process>Noise>Remove NaNs...).";
        }
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

    /** What a result holds: the input's values (same type), a 0/255 mask, distances, or labels. */
    static final int SAME_VALUES = 0, BINARY = 1, DISTANCE = 2, LABELS = 3;

    /** The title without a file extension (".tif", ".ome.tif", ...); spaces kept. */
    static String baseTitle(String title) {
        String t = title == null ? "" : title.trim();
        Matcher m = Pattern.compile("(?i)^(.+?)(\\.ome)?\\.[a-z][a-z0-9]{0,4}$").matcher(t);
        return m.matches() ? m.group(1) : t;
    }

    /** "<input title without extension>-<suffix>", made unique among the open images as ImageJ does. */
    static String resultTitle(ImagePlus from, String suffix) {
        String t = baseTitle(from.getTitle()) + "-" + suffix;
        return WindowManager.getImage(t) == null ? t : WindowManager.getUniqueName(t);
    }

    /**
     * A result image titled after @p titleFrom with the dimensions, slice labels
     * and calibration of @p like; for SAME_VALUES also its LUTs, display ranges
     * and composite mode (distances and masks keep the spatial calibration only).
     */
    static ImagePlus result(ImagePlus titleFrom, ImagePlus like, String suffix, ImageStack stack, int kind) {
        for (int i = 1; i <= stack.getSize() && i <= like.getStackSize(); i++)
            stack.setSliceLabel(like.getStack().getSliceLabel(i), i);
        ImagePlus out = new ImagePlus(resultTitle(titleFrom, suffix), stack);
        if (like.getStackSize() == stack.getSize())
            out.setDimensions(like.getNChannels(), like.getNSlices(), like.getNFrames());
        if (like.isHyperStack())
            out.setOpenAsHyperStack(true);
        Calibration cal = like.getCalibration().copy();
        if (kind != SAME_VALUES)
            cal.disableDensityCalibration(); // distances, 0/255 and labels are not the input's calibrated values
        if (kind == SAME_VALUES && like.isComposite() && like.getNChannels() == out.getNChannels()) {
            CompositeImage src = (CompositeImage) like;
            CompositeImage ci = new CompositeImage(out, src.getMode());
            for (int c = 1; c <= ci.getNChannels(); c++) {
                LUT lut = src.getChannelLut(c);
                ci.setChannelLut((LUT) lut.clone(), c);
                ci.setPositionWithoutUpdate(c, 1, 1);
                ci.setDisplayRange(lut.min, lut.max);
            }
            ci.setPositionWithoutUpdate(1, 1, 1);
            out = ci;
        } else if (kind == SAME_VALUES) {
            out.setLut(like.getProcessor().getLut());
            out.setDisplayRange(like.getDisplayRangeMin(), like.getDisplayRangeMax());
        } else if (kind == BINARY) {
            out.setDisplayRange(0, 255);
        } else {
            out.resetDisplayRange();
        }
        out.setCalibration(cal);
        return out;
    }

    /** Opens a result: a window, or the batch-mode/headless image list; it becomes the active image. */
    static void show(ImagePlus out) {
        if (GraphicsEnvironment.isHeadless() && !Interpreter.isBatchMode()) {
            WindowManager.setTempCurrentImage(out);
            return;
        }
        out.show();
    }

    /* ------------------------------------------------------- the runner */

    /** One call of the library on one volume (with c.progress as its listener). */
    interface VolumeOp {
        void run(Ctx c, int[] stackIndices, int slot) throws RuntimeException;
    }

    /** Timings of a command. */
    static final class Timing {
        final long start = System.nanoTime();
        double nativeMs, contextMs, copyMs;
        long tiles, bytesToDevice, bytesFromDevice;
        int workers;
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
            tiles += (long) s[IwppNative.STAT_TILES];
            bytesToDevice += (long) s[IwppNative.STAT_BYTES_TO_DEVICE];
            bytesFromDevice += (long) s[IwppNative.STAT_BYTES_FROM_DEVICE];
            workers = Math.max(workers, (int) s[IwppNative.STAT_WORKERS]);
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
     * The listener of one command: ImageJ's progress bar follows the fraction of
     * the volume being run (tiled calls report about every 100 ms, on this
     * thread), and Esc cancels.
     */
    static final class EscProgress implements IwppNative.Progress {
        private final int count;
        private int index;

        EscProgress(int count) {
            this.count = Math.max(1, count);
        }

        void volume(int i) {
            index = i;
        }

        @Override
        public boolean update(double fraction) {
            double f = fraction >= 0 && fraction <= 1 ? fraction : 0;
            IJ.showProgress((index + f) / count); // works headless too (no progress bar: nothing)
            return IJ.escapePressed();
        }
    }

    /** Whether @p backend (a Ctx backend) may run on a GPU, whose kernels are built on first use. */
    private static boolean mayUseGpu(int backend) {
        if (backend == IwppNative.BACKEND_CUDA || backend == IwppNative.BACKEND_OPENCL)
            return true;
        return backend == IwppNative.BACKEND_AUTO
                && (IwppNative.backendUnavailableReason(IwppNative.BACKEND_CUDA) == null
                        || IwppNative.backendUnavailableReason(IwppNative.BACKEND_OPENCL) == null);
    }

    private static final Pattern WHERE = Pattern.compile("x=(\\d+) y=(\\d+) z=(\\d+)");

    /**
     * A library message in the user's terms: argument names ("in", "mask", ...)
     * become image titles, z becomes the 1-based slice of the stack, and it
     * reads as a sentence.
     */
    static String userMessage(String msg, int[] stackIndices, String... argTitles) {
        String m = msg == null ? "" : msg;
        for (int i = 0; i + 1 < argTitles.length; i += 2)
            if (m.startsWith(argTitles[i] + " ")) {
                m = "\"" + argTitles[i + 1] + "\"" + m.substring(argTitles[i].length());
                break;
            }
        Matcher w = WHERE.matcher(m);
        if (w.find()) {
            int z = Integer.parseInt(w.group(3));
            String slice = stackIndices != null && z < stackIndices.length && stackIndices.length > 1
                    ? " in slice " + stackIndices[z] : "";
            m = m.substring(0, w.start()) + "x=" + w.group(1) + ", y=" + w.group(2) + slice + m.substring(w.end());
        }
        return m;
    }

    /**
     * Runs @p op on every volume with progress and status. With backend auto, a
     * GPU that runs out of memory, fails or lacks the operation is retried once on the CPU. Esc stops
     * between volumes and at the library's progress points inside a call: then
     * nothing is kept and the status line says "cancelled". @p argTitles pairs
     * the library's argument names with image titles, for messages. Returns the
     * timing, or null after an error or a cancel (no result is made then, and
     * nothing is recorded).
     */
    static Timing runVolumes(String command, int backendIndex, int[][] volumes, VolumeOp op, String... argTitles) {
        Timing t = new Timing();
        Ctx ctx = settings(BACKENDS[backendIndex]);
        int n = volumes.length;
        EscProgress progress = new EscProgress(n);
        ctx.progress = progress;
        IJ.resetEscape(); // an Esc from before this command is not for it
        int[] current = null;
        try {
            for (int i = 0; i < n; i++) {
                current = volumes[i];
                if (IJ.escapePressed())
                    throw new IwppCancelledException("cancelled before volume " + (i + 1) + " of " + n);
                if (!gpuUsed && mayUseGpu(ctx.backend))
                    IJ.showStatus(command + ": compiling GPU kernels (first use)\u2026");
                else
                    IJ.showStatus(command + ": " + (n > 1 ? (i + 1) + "/" + n : "running") + " ("
                            + IwppNative.backendName(ctx.backend) + ")");
                IJ.showProgress(i, n);
                progress.volume(i);
                try {
                    op.run(ctx, volumes[i], i);
                } catch (IwppCancelledException e) {
                    throw e;
                } catch (IwppException e) {
                    /* auto may have picked a GPU: one retry on the CPU for memory or device trouble,
                       or an operation that GPU backend does not have (yet) */
                    boolean retry = backendIndex == IwppNative.BACKEND_AUTO && ctx.backend != IwppNative.BACKEND_CPU
                            && (e.getStatus() == IwppNative.ENOMEM || e.getStatus() == IwppNative.EDEVICE
                                    || e.getStatus() == IwppNative.EUNSUPPORTED);
                    if (!retry)
                        throw e;
                    /* a missing operation is said once per command and session, not once per image of a batch */
                    if (e.getStatus() != IwppNative.EUNSUPPORTED || unsupportedSaid.add(command))
                        IJ.log(command + ": " + sentence(userMessage(e.getMessage(), current, argTitles))
                                + " Running on the CPU instead.");
                    /* host memory is the CPU's home: no GPU budget, no GPU workers */
                    ctx = new Ctx(IwppNative.BACKEND_CPU, 0, ctx.threads, 0L, null);
                    ctx.progress = progress;
                    op.run(ctx, volumes[i], i);
                }
                t.add();
                if (t.backend.equals("cuda") || t.backend.equals("opencl"))
                    gpuUsed = true;
            }
        } catch (IwppCancelledException e) {
            IJ.log(command + ": cancelled" + (n > 1 ? " at volume " + (progress.index + 1) + " of " + n : "")
                    + "; no result was made and the input is unchanged.");
            IJ.showProgress(1.0);
            IJ.showStatus(command + ": cancelled");
            IJ.resetEscape();
            Recorder.disableCommandRecording();
            return null;
        } catch (IllegalArgumentException e) {
            error(command, userMessage(e.getMessage(), current, argTitles));
            return null;
        } catch (IwppException e) {
            error(command, userMessage(e.getMessage(), current, argTitles));
            return null;
        } catch (RuntimeException e) {
            error(command, "Internal error, please report it: " + e);
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
    static void logDone(String command, ImagePlus in, Timing t, String what, boolean verbose) {
        double total = t.totalMs();
        double other = total - t.nativeMs - t.contextMs - t.copyMs;
        double outside = total > 0 ? 100.0 * (total - t.nativeMs) / total : 0;
        String msg = String.format(Locale.US,
                "%s: %s (%dx%dx%d %d-bit)%s - backend %s%s; total %.1f ms = native %.1f + context %.1f"
                        + " + JNI copies %.1f + other %.1f ms (%.1f%% outside the native operation)",
                command, in.getTitle(), in.getWidth(), in.getHeight(), in.getStackSize(), in.getBitDepth(),
                what.isEmpty() ? "" : ", " + what, t.backend, t.variant.isEmpty() ? "" : " (" + t.variant + ")",
                total, t.nativeMs, t.contextMs, t.copyMs, other, outside);
        if (t.tiles > 0)
            msg += String.format(Locale.US, "; tiles: %d runs, %d worker%s", t.tiles, t.workers,
                    t.workers == 1 ? "" : "s")
                    + (t.bytesToDevice + t.bytesFromDevice > 0 ? String.format(Locale.US,
                            ", %.1f MB to and %.1f MB from the device", t.bytesToDevice / 1048576.0,
                            t.bytesFromDevice / 1048576.0) : "");
        if (verbose)
            IJ.log(msg);
        IJ.showStatus(String.format(Locale.US, "%s: %.0f ms on %s", command, total, t.backend));
    }

    /**
     * Shows an error: a dialog in the GUI, the log when headless or in batch
     * mode. A running macro is aborted so a batch job does not go on with the
     * wrong image.
     */
    static void error(String command, String message) {
        String msg = sentence(message == null || message.isEmpty() ? "unknown error" : message);
        Recorder.disableCommandRecording(); // a run that failed is not recorded
        if (GraphicsEnvironment.isHeadless() || Interpreter.isBatchMode()) {
            IJ.log(command + " error: " + msg);
            if (IJ.isMacro() || Macro.getOptions() != null)
                Interpreter.abort(); // stops the macro (as a macro error would)
        } else {
            IJ.error(command, msg);
        }
    }

    /** A full sentence: a capital first letter and a final period. */
    static String sentence(String m) {
        String s = m.trim();
        if (s.isEmpty())
            return s;
        if (Character.isLowerCase(s.charAt(0)))
            s = Character.toUpperCase(s.charAt(0)) + s.substring(1);
        char last = s.charAt(s.length() - 1);
        return last == '.' || last == '!' || last == '?' ? s : s + ".";
    }
}
