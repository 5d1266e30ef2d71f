/*
 * IwppNative.java - the Java face of the IWPP C library (native/include/iwpp.h).
 *
 * One class of static methods over primitive arrays, plus the code that finds
 * and loads the native library. Each operation's method is a thin wrapper over
 * the native of its kind (native/ops.def; IwppOp names the operations). Images are given as one array per slice,
 * as ImageJ stores them: byte[][] (8-bit, U8), short[][] (16-bit, U16, read as
 * unsigned) or float[][] (32-bit, F32); label images may also be int[][]
 * (32-bit labels, U32, read as unsigned). A 2D image is an array of one slice;
 * the number of slices is the depth of a 3D image.
 *
 * Every operation takes (backend, device, threads) first: they select the
 * native context. threads is 0 (all cores, at most MAX_THREADS) or 1 to
 * MAX_THREADS; anything else is an IllegalArgumentException. The glue keeps one context per Java thread (contexts are not
 * shared between threads) and re-creates it when these settings change, so
 * several threads may call at once.
 *
 * The full form of each operation then takes (memoryLimit, workers, progress):
 *  - memoryLimit: device memory one call may use, in bytes (0 = the device's
 *    free memory; on the CPU backend 0 = no limit). A reconstruction (or an
 *    operation built on it) whose working set exceeds it runs through tiles,
 *    with results bit-identical to the in-memory path. Negative: IllegalArgumentException.
 *  - workers: who shares the tiles of one image (iwpp_context_set_workers), a
 *    comma-separated list of "gpu" (the context's own device), "cuda:D",
 *    "opencl:D", "all-gpus", "cpu", each optionally "*N": e.g. "gpu*2" (two
 *    streams on one GPU), "all-gpus,cpu", "gpu,cpu*8". null or "" = the
 *    context's own device alone. A list the library cannot read is an
 *    IllegalArgumentException with its sentence (checkWorkers checks one ahead).
 *  - progress: null, or a listener called on the calling thread about every
 *    100 ms of a tiled call with the fraction done; returning true cancels the
 *    call, which then throws IwppCancelledException. An exception thrown by the
 *    listener cancels the call too and is rethrown from it.
 * The short forms (without these three) use 0, null, null.
 *
 * Errors: IllegalArgumentException for a wrong argument (IWPP_EINVAL),
 * IwppCancelledException when a listener cancelled, IwppException (with the
 * status code) for everything else. The message is the library's sentence. A
 * call that fails or is cancelled writes no output: the glue works on native
 * copies of the arrays and copies results back only after a successful call.
 *
 * Slices: the glue reads each slice reference of an Object[] once, when the
 * call starts, and uses only those arrays (a null or mistyped slice is an
 * IllegalArgumentException before anything runs); replacing slices from
 * another thread during a call does not affect that call.
 */
package iwpp;

import java.io.IOException;

public final class IwppNative {

    /** Version of this Java layer; the tests check it equals the native library's. */
    public static final String VERSION = "0.1.0";

    /* iwpp_status */
    public static final int OK = 0, EINVAL = 1, ENOMEM = 2, EDEVICE = 3, EUNSUPPORTED = 4, EINTERNAL = 5,
            ECANCELED = 6;
    /* iwpp_backend */
    public static final int BACKEND_AUTO = 0, BACKEND_CPU = 1, BACKEND_CUDA = 2, BACKEND_OPENCL = 3;
    /** Largest CPU thread count (IWPP_MAX_THREADS in iwpp.h; the tests check maxThreads() agrees). */
    public static final int MAX_THREADS = 1024;
    /* iwpp_morph_mode */
    public static final int BY_DILATION = 0, BY_EROSION = 1;
    /* iwpp_edt_method */
    public static final int EDT_EXACT = 0, EDT_DANIELSSON = 1;
    /* iwpp_label_mode: what joins two neighbouring nonzero pixels in label() */
    public static final int LABEL_BINARY = 0, LABEL_EQUAL = 1;
    /** Largest label a 16-bit (short[]) label image holds. */
    public static final int MAX_LABEL_U16 = 65535;
    /* indices into lastStats() */
    public static final int STAT_BACKEND = 0, STAT_TOTAL_MS = 1, STAT_COMPUTE_MS = 2,
            STAT_PIXELS_VISITED = 3, STAT_ROUNDS = 4, STAT_OVERFLOW_RERUNS = 5, STAT_GLUE_MS = 6,
            STAT_CONTEXT_MS = 7, STAT_COPY_MS = 8;
    /* indices into lastStats(): tiled calls (0 for a call that ran in memory) */
    public static final int STAT_TILES = 9, STAT_TILE_GRID = 10, STAT_TILE_ROUNDS = 11,
            STAT_BYTES_TO_DEVICE = 12, STAT_BYTES_FROM_DEVICE = 13, STAT_WORKERS = 14;

    /**
     * Progress of a call. update() is called on the thread that made the call,
     * about every 100 ms of a tiled call and at the natural points of a call in
     * memory (start, device work, an opening's erosion rounds, before the result
     * is written), with the fraction of the work done (0 to 1, not decreasing
     * within one library call; 1 at the end); return true to cancel the call
     * (the final 1 cannot cancel). A cancelled call throws
     * IwppCancelledException and leaves the arrays untouched.
     */
    public interface Progress {
        boolean update(double fraction);
    }

    /** Base name of the native library (libiwpp_jni.so, iwpp_jni.dll, libiwpp_jni.dylib). */
    public static final String LIBRARY_NAME = NativeLoader.LIBRARY_NAME;

    private static final String BACKEND_NAMES[] = { "auto", "cpu", "cuda", "opencl" };

    private static volatile String location;   // where the library was loaded from
    private static volatile Throwable loadError; // why it could not be loaded

    static {
        try {
            String loaded = NativeLoader.load(VERSION);
            /* the file's marker said VERSION; the code in it must say so too */
            String v = version();
            if (!VERSION.equals(v))
                throw new IOException(loaded + " reports version " + v + ", this plugin is " + VERSION);
            location = loaded;
        } catch (Throwable t) {
            loadError = t;
        }
    }

    private IwppNative() {
    }

    /** True if the native library is loaded and the native methods can be called. */
    public static boolean isLoaded() {
        return location != null;
    }

    /** The file the native library was loaded from, or null. */
    public static String libraryLocation() {
        return location;
    }

    /** Throws an IwppException that says why the native library is not usable, if it is not. */
    public static void requireLoaded() {
        if (location == null) {
            Throwable t = loadError;
            throw new IwppException(EDEVICE, "The IWPP native library could not be loaded: "
                    + (t == null ? "unknown reason" : t.getMessage()), t);
        }
    }

    /** "auto", "cpu", "cuda" or "opencl" (as iwpp_backend_name). */
    public static String backendName(int backend) {
        return backend >= 0 && backend < BACKEND_NAMES.length ? BACKEND_NAMES[backend] : "unknown";
    }

    /** The backend code for a name ("auto", "cpu", "cuda", "opencl"; case ignored), or -1. */
    public static int backendFromName(String name) {
        for (int i = 0; i < BACKEND_NAMES.length; i++)
            if (BACKEND_NAMES[i].equalsIgnoreCase(name == null ? "" : name.trim()))
                return i;
        return -1;
    }

    /** Whether a backend is built and has a usable device. */
    public static boolean backendAvailable(int backend) {
        return backendUnavailableReason(backend) == null;
    }

    /* ---------------------------------------------------------------- natives */

    /** The native library's version, "major.minor.patch". */
    public static native String version();

    /** The native library's IWPP_MAX_THREADS (equal to MAX_THREADS). */
    public static native int maxThreads();

    /** null if @p backend is usable, else the library's reason (iwpp_backend_available). */
    public static native String backendUnavailableReason(int backend);

    /** Number of devices of a backend (0 if unavailable). */
    public static native int deviceCount(int backend);

    /**
     * Device @p index of @p backend: returns {name, platform}; if @p numbersOut is
     * not null (length >= 3) it receives {global memory bytes, compute units, is GPU 0/1}.
     */
    public static native String[] deviceInfo(int backend, int index, long[] numbersOut);

    /**
     * Figures of the last successful operation on this thread, indexed by the
     * STAT_* constants: backend that ran, total ms, compute ms, pixels visited,
     * rounds, overflow re-runs, the ms of the whole JNI call, and of that call
     * the ms spent creating the native context (first call of a thread or new
     * settings) and copying pixels between Java arrays and native buffers; then,
     * for a tiled call, tile runs (a tile re-run after its halo changed counts
     * again), tiles in the grid, most runs of one tile, bytes copied to and from
     * the devices, and the number of workers (all 0 for a call that ran in memory).
     * null if this thread has not run an operation successfully yet.
     */
    public static native double[] lastStats();

    /** Tile runs per worker of the last successful tiled operation on this thread (the
     *  first 16 workers; empty after a call in memory), or null if there was none. */
    public static native long[] lastWorkerTiles();

    /** The algorithm variant of the last successful operation on this thread ("" if none). */
    public static native String lastVariant();

    /**
     * Checks a worker list for (backend, device, threads) without running anything
     * (on a context of its own, not this thread's): an IllegalArgumentException
     * with the library's sentence if it is not usable here, else nothing. null or
     * "" is always fine. With a backend that is not available, the list is read
     * against the CPU.
     */
    public static native void checkWorkers(int backend, int device, int threads, String workers);

    /**
     * Morphological reconstruction of @p marker under (BY_DILATION) or over
     * (BY_EROSION) @p mask, in place in @p marker (iwpp_reconstruct). Both are
     * arrays of slices of the same type and sizes. A call that fails or is
     * cancelled leaves @p marker as it was.
     */
    public static void reconstruct(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] marker, Object[] mask, int width, int height,
            int connectivity, int mode) {
        opReconstruct(IwppOp.RECONSTRUCT.id(), backend, device, threads, memoryLimit, workers, progress,
                marker, mask, width, height, connectivity, mode);
    }

    /**
     * Euclidean distance transform of @p binary (nonzero = foreground) into
     * @p dist (float slices); @p nearest (long slices) may be null, else it
     * receives the linear index of the nearest background pixel.
     */
    public static void distanceTransform(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] binary, int width, int height, int method,
            double spacingX, double spacingY, double spacingZ, float[][] dist, long[][] nearest) {
        opDistanceTransform(IwppOp.DISTANCE_TRANSFORM.id(), backend, device, threads, memoryLimit, workers, progress,
                binary, width, height, method, spacingX, spacingY, spacingZ, dist, nearest);
    }

    /** Fill holes; @p out has the type and sizes of @p in (it may be @p in itself). */
    public static void fillHoles(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, int width, int height, int connectivity,
            Object[] out) {
        opFilter(IwppOp.FILL_HOLES.id(), backend, device, threads, memoryLimit, workers, progress,
                in, width, height, 0, connectivity, out);
    }

    /** Kill borders; @p out has the type and sizes of @p in. */
    public static void killBorders(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, int width, int height, int connectivity,
            Object[] out) {
        opFilter(IwppOp.KILL_BORDERS.id(), backend, device, threads, memoryLimit, workers, progress,
                in, width, height, 0, connectivity, out);
    }

    /** Regional maxima into @p out (byte slices, 255 on maxima). */
    public static void regionalMaxima(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, int width, int height, int connectivity,
            byte[][] out) {
        opFilter(IwppOp.REGIONAL_MAXIMA.id(), backend, device, threads, memoryLimit, workers, progress,
                in, width, height, 0, connectivity, out);
    }

    /** Regional minima into @p out (byte slices, 255 on minima). */
    public static void regionalMinima(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, int width, int height, int connectivity,
            byte[][] out) {
        opFilter(IwppOp.REGIONAL_MINIMA.id(), backend, device, threads, memoryLimit, workers, progress,
                in, width, height, 0, connectivity, out);
    }

    /** H-maxima transform; @p out has the type and sizes of @p in. */
    public static void hMaxima(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, int width, int height, double h,
            int connectivity, Object[] out) {
        opFilter(IwppOp.H_MAXIMA.id(), backend, device, threads, memoryLimit, workers, progress,
                in, width, height, h, connectivity, out);
    }

    /** H-minima transform; @p out has the type and sizes of @p in. */
    public static void hMinima(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, int width, int height, double h,
            int connectivity, Object[] out) {
        opFilter(IwppOp.H_MINIMA.id(), backend, device, threads, memoryLimit, workers, progress,
                in, width, height, h, connectivity, out);
    }

    /** Opening by reconstruction; @p out has the type and sizes of @p in. */
    public static void openingByReconstruction(int backend, int device, int threads,
            long memoryLimit, String workers, Progress progress, Object[] in, int width, int height,
            int radius, int connectivity, Object[] out) {
        opFilter(IwppOp.OPENING.id(), backend, device, threads, memoryLimit, workers, progress,
                in, width, height, radius, connectivity, out);
    }

    /** Closing by reconstruction; @p out has the type and sizes of @p in. */
    public static void closingByReconstruction(int backend, int device, int threads,
            long memoryLimit, String workers, Progress progress, Object[] in, int width, int height,
            int radius, int connectivity, Object[] out) {
        opFilter(IwppOp.CLOSING.id(), backend, device, threads, memoryLimit, workers, progress,
                in, width, height, radius, connectivity, out);
    }


    /* ------------------------------------------------ labels and watershed */
    /*
     * Label images are short[] (16-bit) or int[] (32-bit) slices, read as
     * unsigned: 0 = no label, 1..N = objects. A result whose largest label does
     * not fit in 16 bits is an IllegalArgumentException (nothing written).
     */

    /**
     * Connected-component labeling of the nonzero pixels of @p in (byte[], short[]
     * or float[] slices) into @p labels (short[] or int[] slices, the sizes of @p in),
     * joined as @p mode says (LABEL_BINARY: any two nonzero neighbours;
     * LABEL_EQUAL: nonzero neighbours of equal value), numbered in raster order of
     * each component's first pixel (iwpp_label). Returns the number of components.
     */
    public static long label(int backend, int device, int threads, long memoryLimit, String workers,
            Progress progress, Object[] in, int width, int height, int connectivity, int mode, Object[] labels) {
        return opLabel(IwppOp.LABEL.id(), backend, device, threads, memoryLimit, workers, progress,
                in, width, height, connectivity, mode, labels);
    }

    /**
     * Marker-controlled watershed of the relief @p in (byte[], short[] or float[])
     * from @p markers (byte[], short[] or int[] label slices; 0 = no marker) inside
     * @p mask (any gray slices, nonzero = inside; null = the whole image) into
     * @p labels (short[] or int[]); with @p lines, watershed lines of 0 separate the
     * regions (iwpp_watershed: its header defines the unique result).
     */
    public static void watershed(int backend, int device, int threads, long memoryLimit, String workers,
            Progress progress, Object[] in, Object[] markers, Object[] mask, int width, int height,
            int connectivity, boolean lines, Object[] labels) {
        opWatershed(IwppOp.WATERSHED.id(), backend, device, threads, memoryLimit, workers, progress,
                in, markers, mask, width, height, connectivity, lines, labels);
    }

    /**
     * Distance-transform watershed of @p binary (nonzero = object): exact EDT with
     * the voxel spacing, extended maxima of the distance with @p dynamic (in the
     * units of the spacing) as markers, then the watershed of the negated distance
     * inside the objects, into @p labels (short[] or int[]; iwpp_distance_watershed).
     */
    public static void distanceWatershed(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] binary, int width, int height, double spacingX,
            double spacingY, double spacingZ, double dynamic, int connectivity, boolean lines, Object[] labels) {
        opDistanceWatershed(IwppOp.DISTANCE_WATERSHED.id(), backend, device, threads, memoryLimit, workers, progress,
                binary, width, height, spacingX, spacingY, spacingZ, dynamic, connectivity, lines, labels);
    }

    /** Extended maxima (regional maxima of the h-maxima, h = @p dynamic) into @p out (byte slices, 255). */
    public static void extendedMaxima(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, int width, int height, double dynamic,
            int connectivity, byte[][] out) {
        opFilter(IwppOp.EXTENDED_MAXIMA.id(), backend, device, threads, memoryLimit, workers, progress,
                in, width, height, dynamic, connectivity, out);
    }

    /** Extended minima (regional minima of the h-minima, h = @p dynamic) into @p out (byte slices, 255). */
    public static void extendedMinima(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, int width, int height, double dynamic,
            int connectivity, byte[][] out) {
        opFilter(IwppOp.EXTENDED_MINIMA.id(), backend, device, threads, memoryLimit, workers, progress,
                in, width, height, dynamic, connectivity, out);
    }

    /**
     * Impose minima (MATLAB imimposemin): the only regional minima of the result
     * are where @p markers (any gray slices) is nonzero. @p out has the type and
     * sizes of @p in.
     */
    public static void imposeMinima(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, Object[] markers, int width, int height,
            int connectivity, Object[] out) {
        opMarker(IwppOp.IMPOSE_MINIMA.id(), backend, device, threads, memoryLimit, workers, progress,
                in, markers, width, height, connectivity, out);
    }

    /**
     * Every label of @p labels (byte[], short[] or int[]) with a pixel on the
     * image border (z too when there are several slices) becomes 0 in @p out (the
     * type of @p labels); the other labels keep their values.
     */
    public static void removeBorderLabels(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] labels, int width, int height, Object[] out) {
        opLabelFilter(IwppOp.REMOVE_BORDER_LABELS.id(), backend, device, threads, memoryLimit, workers, progress,
                labels, width, height, 0L, 0L, out);
    }

    /**
     * Every label of @p labels with fewer than @p minPixels or (if @p maxPixels > 0)
     * more than @p maxPixels pixels becomes 0 in @p out (the type of @p labels).
     */
    public static void labelSizeFilter(int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] labels, int width, int height, long minPixels,
            long maxPixels, Object[] out) {
        opLabelFilter(IwppOp.LABEL_SIZE_FILTER.id(), backend, device, threads, memoryLimit, workers, progress,
                labels, width, height, minPixels, maxPixels, out);
    }

    /**
     * Any operation of kind FILTER, FILTER_H or FILTER_RADIUS (fill holes ... extended minima),
     * chosen by @p op: @p param is h (or the dynamic) for FILTER_H, the radius for FILTER_RADIUS
     * (a whole number), unused for FILTER. The same as the op's named method.
     */
    public static void filter(IwppOp op, int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, int width, int height, double param,
            int connectivity, Object[] out) {
        if (op.kind != IwppOp.Kind.FILTER && op.kind != IwppOp.Kind.FILTER_H && op.kind != IwppOp.Kind.FILTER_RADIUS)
            throw new IllegalArgumentException(op + " is not a filter (its kind is " + op.kind + ").");
        if (op.kind == IwppOp.Kind.FILTER_RADIUS && param != (int) param)
            throw new IllegalArgumentException("the radius must be a whole number, not " + param + ".");
        opFilter(op.id(), backend, device, threads, memoryLimit, workers, progress, in, width, height,
                op.kind == IwppOp.Kind.FILTER ? 0 : param, connectivity, out);
    }

    /* ------------------------------ the natives: one per kind of native/ops.def (java/iwpp_jni_ops.c) */
    /*
     * Each takes the op's id (IwppOp.id()) first; the glue checks that the op is of the entry's
     * kind and calls its C function from the table.
     */

    /** The C table, one "ID KIND OUT method" per op in id order (IwppNativeTest compares it with IwppOp). */
    static native String[] opTable();

    private static native void opReconstruct(int op, int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] marker, Object[] mask, int width, int height,
            int connectivity, int mode);

    private static native void opDistanceTransform(int op, int backend, int device, int threads,
            long memoryLimit, String workers, Progress progress, Object[] binary, int width, int height,
            int method, double spacingX, double spacingY, double spacingZ, float[][] dist, long[][] nearest);

    /** FILTER, FILTER_H, FILTER_RADIUS: @p param is h or the radius. */
    private static native void opFilter(int op, int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, int width, int height, double param,
            int connectivity, Object[] out);

    private static native void opMarker(int op, int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, Object[] markers, int width, int height,
            int connectivity, Object[] out);

    private static native long opLabel(int op, int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, int width, int height, int connectivity, int mode,
            Object[] labels);

    private static native void opWatershed(int op, int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] in, Object[] markers, Object[] mask, int width,
            int height, int connectivity, boolean lines, Object[] labels);

    private static native void opDistanceWatershed(int op, int backend, int device, int threads,
            long memoryLimit, String workers, Progress progress, Object[] binary, int width, int height,
            double spacingX, double spacingY, double spacingZ, double dynamic, int connectivity, boolean lines,
            Object[] labels);

    /** LABEL_PASS, LABEL_SIZE: @p minPixels and @p maxPixels are for LABEL_SIZE only. */
    private static native void opLabelFilter(int op, int backend, int device, int threads, long memoryLimit,
            String workers, Progress progress, Object[] labels, int width, int height, long minPixels,
            long maxPixels, Object[] out);

    /* ------------------------------ short forms: default budget and workers, no listener */

    public static void reconstruct(int backend, int device, int threads, Object[] marker, Object[] mask,
            int width, int height, int connectivity, int mode) {
        reconstruct(backend, device, threads, 0L, null, null, marker, mask, width, height, connectivity, mode);
    }

    public static void distanceTransform(int backend, int device, int threads, Object[] binary, int width,
            int height, int method, double spacingX, double spacingY, double spacingZ, float[][] dist,
            long[][] nearest) {
        distanceTransform(backend, device, threads, 0L, null, null, binary, width, height, method, spacingX,
                spacingY, spacingZ, dist, nearest);
    }

    public static void fillHoles(int backend, int device, int threads, Object[] in, int width, int height,
            int connectivity, Object[] out) {
        fillHoles(backend, device, threads, 0L, null, null, in, width, height, connectivity, out);
    }

    public static void killBorders(int backend, int device, int threads, Object[] in, int width, int height,
            int connectivity, Object[] out) {
        killBorders(backend, device, threads, 0L, null, null, in, width, height, connectivity, out);
    }

    public static void regionalMaxima(int backend, int device, int threads, Object[] in, int width,
            int height, int connectivity, byte[][] out) {
        regionalMaxima(backend, device, threads, 0L, null, null, in, width, height, connectivity, out);
    }

    public static void regionalMinima(int backend, int device, int threads, Object[] in, int width,
            int height, int connectivity, byte[][] out) {
        regionalMinima(backend, device, threads, 0L, null, null, in, width, height, connectivity, out);
    }

    public static void hMaxima(int backend, int device, int threads, Object[] in, int width, int height,
            double h, int connectivity, Object[] out) {
        hMaxima(backend, device, threads, 0L, null, null, in, width, height, h, connectivity, out);
    }

    public static void hMinima(int backend, int device, int threads, Object[] in, int width, int height,
            double h, int connectivity, Object[] out) {
        hMinima(backend, device, threads, 0L, null, null, in, width, height, h, connectivity, out);
    }

    public static void openingByReconstruction(int backend, int device, int threads, Object[] in, int width,
            int height, int radius, int connectivity, Object[] out) {
        openingByReconstruction(backend, device, threads, 0L, null, null, in, width, height, radius,
                connectivity, out);
    }

    public static void closingByReconstruction(int backend, int device, int threads, Object[] in, int width,
            int height, int radius, int connectivity, Object[] out) {
        closingByReconstruction(backend, device, threads, 0L, null, null, in, width, height, radius,
                connectivity, out);
    }

    public static long label(int backend, int device, int threads, Object[] in, int width, int height,
            int connectivity, int mode, Object[] labels) {
        return label(backend, device, threads, 0L, null, null, in, width, height, connectivity, mode, labels);
    }

    public static void watershed(int backend, int device, int threads, Object[] in, Object[] markers,
            Object[] mask, int width, int height, int connectivity, boolean lines, Object[] labels) {
        watershed(backend, device, threads, 0L, null, null, in, markers, mask, width, height, connectivity,
                lines, labels);
    }

    public static void distanceWatershed(int backend, int device, int threads, Object[] binary, int width,
            int height, double spacingX, double spacingY, double spacingZ, double dynamic, int connectivity,
            boolean lines, Object[] labels) {
        distanceWatershed(backend, device, threads, 0L, null, null, binary, width, height, spacingX, spacingY,
                spacingZ, dynamic, connectivity, lines, labels);
    }

    public static void extendedMaxima(int backend, int device, int threads, Object[] in, int width, int height,
            double dynamic, int connectivity, byte[][] out) {
        extendedMaxima(backend, device, threads, 0L, null, null, in, width, height, dynamic, connectivity, out);
    }

    public static void extendedMinima(int backend, int device, int threads, Object[] in, int width, int height,
            double dynamic, int connectivity, byte[][] out) {
        extendedMinima(backend, device, threads, 0L, null, null, in, width, height, dynamic, connectivity, out);
    }

    public static void imposeMinima(int backend, int device, int threads, Object[] in, Object[] markers,
            int width, int height, int connectivity, Object[] out) {
        imposeMinima(backend, device, threads, 0L, null, null, in, markers, width, height, connectivity, out);
    }

    public static void removeBorderLabels(int backend, int device, int threads, Object[] labels, int width,
            int height, Object[] out) {
        removeBorderLabels(backend, device, threads, 0L, null, null, labels, width, height, out);
    }

    public static void labelSizeFilter(int backend, int device, int threads, Object[] labels, int width,
            int height, long minPixels, long maxPixels, Object[] out) {
        labelSizeFilter(backend, device, threads, 0L, null, null, labels, width, height, minPixels, maxPixels,
                out);
    }

    /* ----------------------------------------------------------- the loader */

    /** The jar's folder name for this JVM's platform (e.g. "linux-x86_64"), or null if it has none. */
    public static String platform() {
        return NativeLoader.platform(System.getProperty("os.name"), System.getProperty("os.arch"));
    }

    /** What the loader skipped or fell back from (libraries of another version, an unwritable cache). */
    public static java.util.List<String> loaderNotes() {
        return NativeLoader.notes();
    }
}
