/*
 * Labels.java - what the label and watershed commands share: the output bit
 * depth choice, label images in and out of ImageJ's pixel types, and the
 * choice of images among the open windows.
 *
 * Label images in ImageJ: 8-bit and 16-bit images hold labels as they are;
 * ImageJ has no 32-bit integer image, so 32-bit labels live in a 32-bit float
 * image, which holds every whole number exactly only up to 2^24 = 16777216.
 * A 32-bit float label image given as input must hold whole numbers >= 0
 * (below 2^32); a result with more than 2^24 labels is refused rather than
 * rounded.
 */
package iwpp.plugin;

import ij.ImagePlus;
import ij.ImageStack;
import ij.WindowManager;

import iwpp.IwppNative;

final class Labels {
    /** Output choices: "auto" is 16-bit when the largest label fits (65535), else 32-bit. */
    static final String[] OUTPUTS = { "auto", "16-bit", "32-bit" };
    static final String OUTPUT_NOTE = "Output auto: 16-bit up to 65535 labels, else 32-bit (float: exact up to 16777216).";
    /** Largest whole number a float holds together with all the smaller ones. */
    static final long MAX_FLOAT_LABEL = 1L << 24;
    static final String NONE = "None";

    private Labels() {
    }

    /* ------------------------------------------------------------ inputs */

    /**
     * null if @p imp can be read as a label image (8-, 16-bit, or 32-bit holding
     * whole numbers from 0 to 2^32-1), else a sentence saying where it is not.
     */
    static String checkLabelImage(ImagePlus imp, String role) {
        int bd = imp.getBitDepth();
        if (bd == 8 || bd == 16)
            return null;
        if (bd != 32)
            return "The " + role + " \"" + imp.getTitle() + "\" is " + (bd == 24 ? "an RGB" : bd + "-bit")
                    + " image; a label image is 8-bit, 16-bit or 32-bit (whole numbers, 0 = no label).";
        ImageStack st = imp.getStack();
        int w = imp.getWidth();
        for (int s = 1; s <= st.getSize(); s++) {
            float[] px = (float[]) st.getPixels(s);
            for (int i = 0; i < px.length; i++) {
                float v = px[i];
                if (!(v >= 0 && v <= 4294967295.0 && v == Math.rint(v)))
                    return "The " + role + " \"" + imp.getTitle() + "\" has the value " + v + " at x=" + (i % w)
                            + ", y=" + (i / w) + (st.getSize() > 1 ? " in slice " + s : "")
                            + "; labels must be whole numbers from 0 (no label) to 4294967295.";
            }
        }
        return null;
    }

    /** The slices of a label image as the library reads them: byte[]/short[] as they are, float[] as int[]. */
    static Object[] labelSlices(ImageStack stack, int[] idx) {
        Object[] src = IwppRun.slices(stack, idx);
        if (!(src[0] instanceof float[]))
            return src;
        int[][] out = new int[src.length][];
        for (int z = 0; z < src.length; z++) {
            float[] f = (float[]) src[z];
            int[] a = new int[f.length];
            for (int i = 0; i < f.length; i++)
                a[i] = (int) (long) f[i]; // whole numbers below 2^32 (checked): the low 32 bits
            out[z] = a;
        }
        return out;
    }

    /* ------------------------------------------------------------ outputs */

    /** New zeroed label slices: short[] when @p u16, else int[]. */
    static Object[] newLabelSlices(boolean u16, int n, int size) {
        if (u16)
            return new short[n][size];
        return new int[n][size];
    }

    /** The largest label (unsigned) in short[] or int[] slices. */
    static long maxLabel(Object[] slices) {
        long m = 0;
        for (Object s : slices) {
            if (s instanceof short[])
                for (short v : (short[]) s)
                    m = Math.max(m, v & 0xffff);
            else
                for (int v : (int[]) s)
                    m = Math.max(m, v & 0xffffffffL);
        }
        return m;
    }

    /**
     * null if labels up to @p max fit the output @p choice, else why not. @p u16:
     * the results are already 16-bit (then they fit).
     */
    static String checkFits(long max, String choice) {
        if ("16-bit".equals(choice) && max > IwppNative.MAX_LABEL_U16)
            return max + " labels do not fit in a 16-bit image (at most 65535); choose output=32-bit or output=auto.";
        if (max > MAX_FLOAT_LABEL)
            return "The result has " + max + " labels; a 32-bit ImageJ image is float and holds whole numbers "
                    + "exactly only up to 16777216, so it cannot hold them. Process a smaller image, or slice by "
                    + "slice (stack=slices).";
        return null;
    }

    /** Whether a result with largest label @p max is made 16-bit for the output @p choice. */
    static boolean sixteenBit(long max, String choice) {
        return "16-bit".equals(choice) || ("auto".equals(choice) && max <= IwppNative.MAX_LABEL_U16);
    }

    /** One slice of the result: a short[] as it is (16-bit), or short[]/int[] labels as floats (32-bit). */
    static Object toImageJ(Object labels, boolean sixteen) {
        if (labels instanceof short[] && sixteen)
            return labels;
        if (labels instanceof short[]) {
            short[] s = (short[]) labels;
            float[] f = new float[s.length];
            for (int i = 0; i < s.length; i++)
                f[i] = s[i] & 0xffff;
            return f;
        }
        int[] a = (int[]) labels;
        if (sixteen) {
            short[] s = new short[a.length];
            for (int i = 0; i < a.length; i++)
                s[i] = (short) a[i]; // <= 65535 (checked)
            return s;
        }
        float[] f = new float[a.length];
        for (int i = 0; i < a.length; i++)
            f[i] = (float) (a[i] & 0xffffffffL); // <= 2^24 (checked): exact
        return f;
    }

    /**
     * The result stack of a label command: each volume's slices (@p results[v],
     * short[] or int[]) at its stack indices, 16-bit or 32-bit float.
     */
    static ImageStack assemble(int w, int h, int size, int[][] vols, Object[][] results, boolean sixteen) {
        ImageStack out = new ImageStack(w, h, size);
        for (int v = 0; v < vols.length; v++)
            for (int i = 0; i < vols[v].length; i++)
                out.setPixels(toImageJ(results[v][i], sixteen), vols[v][i]);
        return out;
    }

    /** The largest label over every volume's results. */
    static long maxLabel(Object[][] results) {
        long m = 0;
        for (Object[] r : results)
            m = Math.max(m, maxLabel(r));
        return m;
    }

    /** The result image of a label command (spatial calibration of @p like, display range 0 to the largest label). */
    static ImagePlus result(ImagePlus titleFrom, ImagePlus like, String suffix, ImageStack stack, long max) {
        ImagePlus out = IwppRun.result(titleFrom, like, suffix, stack, IwppRun.LABELS);
        out.setDisplayRange(0, Math.max(1, max));
        return out;
    }

    /** A label result in the input's form: byte[]/short[] as they are, int[] back to float[] (exact: values came from floats). */
    static Object sameTypeAsInput(Object labels) {
        return labels instanceof int[] ? toImageJ(labels, false) : labels;
    }

    /** A library message about label overflow in the dialog's terms. */
    static String userOverflow(String msg) {
        return msg == null ? null : msg.replace("use a 32-bit (u32) output", "choose output=32-bit or output=auto");
    }

    /* ------------------------------------------------------------ windows */

    /** The titles of the open images (in WindowManager order), or null if none. */
    static String[] openTitles(int[] ids) {
        if (ids == null || ids.length == 0)
            return null;
        String[] titles = new String[ids.length];
        for (int i = 0; i < ids.length; i++) {
            ImagePlus im = WindowManager.getImage(ids[i]);
            titles[i] = im == null ? "" : im.getTitle();
        }
        return titles;
    }

    /** The index of the active image among @p ids, or 0. */
    static int activeIndex(int[] ids) {
        ImagePlus current = WindowManager.getCurrentImage();
        for (int i = 0; i < ids.length; i++)
            if (current != null && WindowManager.getImage(ids[i]) == current)
                return i;
        return 0;
    }

    static boolean anyStack(int[] ids) {
        for (int id : ids) {
            ImagePlus im = WindowManager.getImage(id);
            if (im != null && im.getStackSize() > 1)
                return true;
        }
        return false;
    }

    /** The open image titled @p title (a validated choice), or null ("None" or closed since). */
    static ImagePlus byTitle(int[] ids, String[] titles, String title) {
        for (int i = 0; i < titles.length; i++)
            if (titles[i].equals(title))
                return WindowManager.getImage(ids[i]);
        return null;
    }

    /** {NONE, titles...}: the choices of an optional image. */
    static String[] withNone(String[] titles) {
        String[] t = new String[titles.length + 1];
        t[0] = NONE;
        System.arraycopy(titles, 0, t, 1, titles.length);
        return t;
    }

    /** null if @p b has the sizes and dimensions of @p a, else a sentence naming both. */
    static String checkSameShape(ImagePlus a, String roleA, ImagePlus b, String roleB) {
        if (a.getWidth() != b.getWidth() || a.getHeight() != b.getHeight() || a.getStackSize() != b.getStackSize())
            return "The " + roleA + " \"" + a.getTitle() + "\" is " + a.getWidth() + "x" + a.getHeight() + "x"
                    + a.getStackSize() + " but the " + roleB + " \"" + b.getTitle() + "\" is " + b.getWidth() + "x"
                    + b.getHeight() + "x" + b.getStackSize() + "; they must have the same size.";
        if (a.getNChannels() != b.getNChannels() || a.getNSlices() != b.getNSlices()
                || a.getNFrames() != b.getNFrames())
            return "The " + roleA + " \"" + a.getTitle() + "\" has " + dims(a) + " but the " + roleB + " \""
                    + b.getTitle() + "\" has " + dims(b) + "; give both the same dimensions (Image>Properties).";
        return null;
    }

    private static String dims(ImagePlus imp) {
        return imp.getNChannels() + " channel(s) x " + imp.getNSlices() + " slice(s) x " + imp.getNFrames()
                + " frame(s)";
    }
}
