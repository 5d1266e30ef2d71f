/*
 * LabelsTest.java - JUnit 4 tests of the label and watershed entry points of
 * iwpp.IwppNative: labeling against a flood-fill reference (every type, 2D
 * and 3D, both modes, 16- and 32-bit labels), the watershed on hand-checked
 * cases and against LabelReference, the distance-transform watershed, extended
 * maxima/minima, impose minima, the label filters, and bad input (an
 * exception with the library's sentence, outputs untouched).
 *
 * The CPU backend must run every operation. A GPU backend that does not have
 * an operation yet answers IWPP_EUNSUPPORTED: that backend is then skipped
 * for it, and said so on stdout.
 */
package iwpp;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.Random;

import org.junit.BeforeClass;
import org.junit.Test;

public class LabelsTest {
    static final int U8 = IwppNativeTest.U8, U16 = IwppNativeTest.U16, F32 = IwppNativeTest.F32;

    @BeforeClass
    public static void load() {
        if (IwppNativeTest.backends.isEmpty()) // not yet loaded by IwppNativeTest in this JVM
            IwppNativeTest.load();
    }

    /* ------------------------------------------------------------ helpers */

    interface Call {
        void run();
    }

    static final java.util.Set<String> skipped = new java.util.HashSet<String>();

    /** Runs @p c; false (and a SKIPPED line) when a GPU backend lacks the operation. */
    static boolean runs(int backend, String op, Call c) {
        try {
            c.run();
            return true;
        } catch (IwppException e) {
            if (e.getStatus() != IwppNative.EUNSUPPORTED || backend == IwppNative.BACKEND_CPU)
                throw e;
            if (skipped.add(op + " on " + IwppNative.backendName(backend))) // said once per operation and backend
                System.out.println("LabelsTest: SKIPPED " + op + " on " + IwppNative.backendName(backend) + ": "
                        + e.getMessage());
            return false;
        }
    }

    static Object[] labelSlices(long[] a, boolean u16, int w, int h, int d) {
        int p = w * h;
        Object[] s = u16 ? new short[d][p] : new int[d][p];
        for (int z = 0; z < d; z++)
            for (int i = 0; i < p; i++)
                if (u16)
                    ((short[]) s[z])[i] = (short) a[z * p + i];
                else
                    ((int[]) s[z])[i] = (int) a[z * p + i];
        return s;
    }

    static long[] fromLabels(Object[] s) {
        int p = s[0] instanceof short[] ? ((short[]) s[0]).length : ((int[]) s[0]).length;
        long[] a = new long[p * s.length];
        for (int z = 0; z < s.length; z++)
            for (int i = 0; i < p; i++)
                a[z * p + i] = s[z] instanceof short[] ? ((short[]) s[z])[i] & 0xffff : ((int[]) s[z])[i] & 0xffffffffL;
        return a;
    }

    static Object[] gray(double[] a, int type, int w, int h, int d) {
        return IwppNativeTest.toSlices(a, type, w, h, d);
    }

    /** A random image with blobs: values in {0, 1, 2} scaled per type, about half zero. */
    static double[] blobs(Random r, int n, int type) {
        double[] a = new double[n];
        for (int i = 0; i < n; i++) {
            int v = r.nextInt(5);
            v = v < 2 ? 0 : v - 2;
            a[i] = v == 0 ? 0 : type == F32 ? v * 0.5 + 0.25 : type == U16 ? v * 1000 : v * 60;
        }
        return a;
    }

    static String what(int backend, String op, int type, int w, int h, int d, int conn) {
        return IwppNative.backendName(backend) + " " + op + " " + type + "-bit " + w + "x" + h + "x" + d + " conn "
                + conn;
    }

    /* ------------------------------------------------------------ labeling */

    @Test
    public void labelEqualsFloodFillReference() {
        Random r = new Random(17);
        int[][] sizes = { { 1, 1, 1 }, { 7, 1, 1 }, { 1, 9, 1 }, { 23, 17, 1 }, { 40, 33, 1 }, { 9, 8, 7 }, { 3, 4, 5 } };
        for (int backend : IwppNativeTest.backends)
            for (int[] sz : sizes)
                for (int type : IwppNativeTest.TYPES)
                    for (int conn : IwppNativeTest.conns(sz[2]))
                        for (int mode = 0; mode < 2; mode++) {
                            final int w = sz[0], h = sz[1], d = sz[2], cn = conn, md = mode, b = backend;
                            double[] a = blobs(r, w * h * d, type);
                            long[] want = new long[a.length];
                            long n = LabelReference.label(a, w, h, d, conn, mode == 1, want);
                            final Object[] in = gray(a, type, w, h, d);
                            for (final boolean u16 : new boolean[] { true, false }) {
                                final Object[] lab = labelSlices(new long[a.length], u16, w, h, d);
                                final long[] got = new long[1];
                                if (!runs(b, "label", new Call() {
                                    public void run() {
                                        got[0] = IwppNative.label(b, 0, 0, in, w, h, cn, md, lab);
                                    }
                                }))
                                    continue;
                                String msg = what(b, "label mode " + mode + (u16 ? " u16" : " u32"), type, w, h, d, conn);
                                assertEquals(msg + " count", n, got[0]);
                                assertArrayEquals(msg, want, fromLabels(lab));
                            }
                        }
    }

    @Test
    public void labelOverflowOf16BitsIsRefusedAndWritesNothing() {
        final int w = 512, h = 512; // a checkerboard: 131072 components under 4-connectivity
        double[] a = new double[w * h];
        for (int i = 0; i < a.length; i++)
            a[i] = ((i % w) + (i / w)) % 2 == 0 ? 1 : 0;
        final Object[] in = gray(a, U8, w, h, 1);
        for (final int b : IwppNativeTest.backends) {
            final short[][] lab16 = new short[1][w * h];
            java.util.Arrays.fill(lab16[0], (short) 7);
            try {
                if (!runs(b, "label", new Call() {
                    public void run() {
                        IwppNative.label(b, 0, 0, in, w, h, 4, IwppNative.LABEL_BINARY, lab16);
                    }
                }))
                    continue;
                fail("131072 labels in 16 bits must be refused");
            } catch (IllegalArgumentException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("131072 labels do not fit in a 16-bit"));
            }
            for (short v : lab16[0])
                assertEquals("a refused call writes nothing", 7, v);
            int[][] lab32 = new int[1][w * h];
            assertEquals(131072L, IwppNative.label(b, 0, 0, in, w, h, 4, IwppNative.LABEL_BINARY, lab32));
            assertEquals(131072, lab32[0][w * h - 1]); // (511, 511): the last component in raster order
        }
    }

    /* ------------------------------------------------------------ watershed */

    /** A one-row watershed on every backend: labels (and lines) as worked out by hand. */
    static void checkRow(double[] relief, long[] markers, double[] mask, boolean lines, long[] want) {
        final int w = relief.length;
        for (final int b : IwppNativeTest.backends)
            for (final int type : new int[] { U8, F32 }) {
                final Object[] in = gray(relief, type, w, 1, 1);
                final Object[] mk = labelSlices(markers, true, w, 1, 1);
                final Object[] ms = mask == null ? null : gray(mask, U8, w, 1, 1);
                final Object[] lab = labelSlices(new long[w], false, w, 1, 1);
                final boolean ln = lines;
                if (!runs(b, "watershed", new Call() {
                    public void run() {
                        IwppNative.watershed(b, 0, 0, in, mk, ms, w, 1, 8, ln, lab);
                    }
                }))
                    continue;
                assertArrayEquals(IwppNative.backendName(b) + " " + type + "-bit lines " + lines, want, fromLabels(lab));
                assertArrayEquals("the reference agrees", want,
                        LabelReference.watershed(relief, markers, mask, w, 1, 1, 8, lines));
            }
    }

    @Test
    public void watershedHandCheckedRidgeAndPlateau() {
        /* a ridge at x=3: both floods reach it at level 3, climbing (D = 0) from the same
           (L, D) = (2, 0): the smaller label wins; with lines it becomes 0, because its
           neighbour x=4 (level 2) is lower */
        double[] ridge = { 0, 1, 2, 3, 2, 1, 0 };
        long[] ends = { 1, 0, 0, 0, 0, 0, 2 };
        checkRow(ridge, ends, null, false, new long[] { 1, 1, 1, 1, 2, 2, 2 });
        checkRow(ridge, ends, null, true, new long[] { 1, 1, 1, 0, 2, 2, 2 });
        /* a plateau of 5: split by the steps along it: x=2 is D=1 from label 1 and D=2 from label 2 */
        double[] plateau = { 0, 5, 5, 5, 5, 0 };
        long[] ends2 = { 1, 0, 0, 0, 0, 2 };
        checkRow(plateau, ends2, null, false, new long[] { 1, 1, 1, 2, 2, 2 });
        /* lines: x=3 (5, 1, label 2) has the neighbour x=2 (5, 1, label 1), smaller by label */
        checkRow(plateau, ends2, null, true, new long[] { 1, 1, 1, 0, 2, 2 });
        /* an odd plateau: the middle pixel is D=2 from both sides; the smaller label takes it */
        double[] odd = { 0, 5, 5, 5, 0 };
        checkRow(odd, new long[] { 3, 0, 0, 0, 2 }, null, false, new long[] { 3, 3, 2, 2, 2 });
    }

    @Test
    public void watershedClimbFollowsTheFirstFlood() {
        /* x=2 (3) is entered by a climb from x=1 (L=1, D=0, label 2) and from x=3 (L=1, D=2,
           label 1): the flood that arrived first, label 2, takes it, not the smaller label */
        double[] plateau = { 0, 1, 3, 1, 1, 1, 0 };
        long[] ends = { 2, 0, 0, 0, 0, 0, 1 };
        checkRow(plateau, ends, null, false, new long[] { 2, 2, 2, 1, 1, 1, 1 });
        /* lines: x=2 (3, 0, label 2) has the smaller neighbour x=3 (1, 2, label 1) */
        checkRow(plateau, ends, null, true, new long[] { 2, 2, 0, 1, 1, 1, 1 });
        /* x=2 (3) is entered from x=1 (L=2, label 1) and x=3 (L=1, label 2): the lower level wins */
        double[] slope = { 0, 2, 3, 1, 0 };
        long[] ends2 = { 1, 0, 0, 0, 2 };
        checkRow(slope, ends2, null, false, new long[] { 1, 1, 2, 2, 2 });
        checkRow(slope, ends2, null, true, new long[] { 1, 1, 0, 2, 2 });
    }

    @Test
    public void watershedMaskAndMarkersOutsideIt() {
        /* mask 0 at x=3 cuts the row: marker 1 floods x=0..2; x=4..6 hold no marker inside the mask
           (the marker at x=3 is outside it and ignored), so they stay 0 */
        double[] relief = { 1, 2, 3, 4, 3, 2, 1 };
        long[] markers = { 1, 0, 0, 5, 0, 0, 0 };
        double[] mask = { 1, 1, 1, 0, 1, 1, 1 };
        checkRow(relief, markers, mask, false, new long[] { 1, 1, 1, 0, 0, 0, 0 });
        /* no marker at all: nothing is labelled */
        checkRow(relief, new long[7], null, false, new long[7]);
    }

    @Test
    public void watershedEqualsReference() {
        Random r = new Random(42);
        int[][] sizes = { { 1, 1, 1 }, { 13, 1, 1 }, { 17, 11, 1 }, { 31, 29, 1 }, { 7, 6, 5 } };
        for (int backend : IwppNativeTest.backends)
            for (int[] sz : sizes)
                for (int type : IwppNativeTest.TYPES)
                    for (int conn : IwppNativeTest.conns(sz[2]))
                        for (int variant = 0; variant < 4; variant++) {
                            final int w = sz[0], h = sz[1], d = sz[2], n = w * h * d, cn = conn, b = backend;
                            final boolean lines = (variant & 1) != 0, masked = (variant & 2) != 0;
                            double[] relief = IwppNativeTest.random(r, n, type, 6); // plateaus and ties
                            long[] markers = new long[n];
                            for (int k = 0; k < 1 + n / 25; k++)
                                markers[r.nextInt(n)] = 1 + r.nextInt(4); // touching markers, repeated labels
                            double[] mask = null;
                            if (masked) {
                                mask = new double[n];
                                for (int i = 0; i < n; i++)
                                    mask[i] = r.nextInt(6) == 0 ? 0 : 1;
                            }
                            long[] want = LabelReference.watershed(relief, markers, mask, w, h, d, conn, lines);
                            final Object[] in = gray(relief, type, w, h, d);
                            final Object[] mk = IwppNativeTest.toSlices(toDoubles(markers), U8, w, h, d);
                            final Object[] ms = mask == null ? null : gray(mask, F32, w, h, d);
                            final Object[] lab = labelSlices(new long[n], true, w, h, d);
                            if (!runs(b, "watershed", new Call() {
                                public void run() {
                                    IwppNative.watershed(b, 0, 0, in, mk, ms, w, h, cn, lines, lab);
                                }
                            }))
                                continue;
                            assertArrayEquals(what(b, "watershed lines " + lines + " mask " + masked, type, w, h, d,
                                    conn), want, fromLabels(lab));
                        }
    }

    static double[] toDoubles(long[] a) {
        double[] d = new double[a.length];
        for (int i = 0; i < a.length; i++)
            d[i] = a[i];
        return d;
    }

    /* ------------------------------------------------- distance watershed */

    /** Two discs of radius @p rad whose centres are @p gap apart, on a w x h image. */
    static double[] twoDiscs(int w, int h, double rad, double gap) {
        double[] a = new double[w * h];
        double cy = h / 2.0, c1 = w / 2.0 - gap / 2, c2 = w / 2.0 + gap / 2;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double d1 = Math.hypot(x - c1, y - cy), d2 = Math.hypot(x - c2, y - cy);
                a[x + w * y] = d1 <= rad || d2 <= rad ? 255 : 0;
            }
        return a;
    }

    @Test
    public void distanceWatershedSplitsTwoTouchingDiscs() {
        final int w = 48, h = 32;
        final double[] a = twoDiscs(w, h, 9, 14);
        for (final int b : IwppNativeTest.backends)
            for (final double dyn : new double[] { 0.5, 100 }) {
                final Object[] in = gray(a, U8, w, h, 1);
                final Object[] lab = labelSlices(new long[w * h], true, w, h, 1);
                if (!runs(b, "distance watershed", new Call() {
                    public void run() {
                        IwppNative.distanceWatershed(b, 0, 0, in, w, h, 1, 1, 1, dyn, 8, false, lab);
                    }
                }))
                    continue;
                long[] got = fromLabels(lab);
                long max = 0;
                for (int i = 0; i < got.length; i++) {
                    assertEquals("labels exactly on the objects at " + i, a[i] != 0, got[i] != 0);
                    max = Math.max(max, got[i]);
                }
                /* a small dynamic keeps both centres (each rises 9 - ~6.7 above the neck); a huge one merges them */
                assertEquals(IwppNative.backendName(b) + " dynamic " + dyn, dyn < 1 ? 2 : 1, max);
                if (dyn < 1) { // the left disc is 1 (raster order of the markers), the right one 2
                    assertEquals(1, got[(int) (w / 2.0 - 7) + w * (h / 2)]);
                    assertEquals(2, got[(int) (w / 2.0 + 7) + w * (h / 2)]);
                }
            }
    }

    @Test
    public void distanceWatershedDynamicIsInCalibratedUnits() {
        /* the same discs with pixels of 0.1 units: distances shrink tenfold, and a dynamic of 1 unit
           (10 pixels) merges the two centres that a dynamic of 0.05 units keeps apart */
        final int w = 48, h = 32;
        final double[] a = twoDiscs(w, h, 9, 14);
        final Object[] in = gray(a, U8, w, h, 1);
        long[] counts = new long[2];
        double[] dyns = { 0.05, 1.0 };
        for (int k = 0; k < 2; k++) {
            int[][] lab = new int[1][w * h];
            IwppNative.distanceWatershed(IwppNative.BACKEND_CPU, 0, 0, in, w, h, 0.1, 0.1, 1, dyns[k], 8, false, lab);
            for (int v : lab[0])
                counts[k] = Math.max(counts[k], v);
        }
        assertEquals(2, counts[0]);
        assertEquals(1, counts[1]);
    }

    /* ------------------------------------------------------------ extrema */

    @Test
    public void extendedMaximaAndMinimaEqualTheirDefinition() {
        Random r = new Random(5);
        for (int b : IwppNativeTest.backends)
            for (int type : IwppNativeTest.TYPES) {
                final int w = 19, h = 13, n = w * h, bk = b;
                double[] a = IwppNativeTest.random(r, n, type, 8);
                final double hv = type == F32 ? 1.5 : type == U16 ? 2 * 257 : 2;
                final Object[] in = gray(a, type, w, h, 1);
                for (final boolean max : new boolean[] { true, false }) {
                    final byte[][] out = new byte[1][n];
                    if (!runs(b, "extended extrema", new Call() {
                        public void run() {
                            if (max)
                                IwppNative.extendedMaxima(bk, 0, 0, in, w, h, hv, 8, out);
                            else
                                IwppNative.extendedMinima(bk, 0, 0, in, w, h, hv, 8, out);
                        }
                    }))
                        continue;
                    double[] hx = max ? Reference.hMaxima(a, w, h, 1, 8, hv, IwppNativeTest.typeMin(type))
                            : Reference.hMinima(a, w, h, 1, 8, hv, IwppNativeTest.typeMax(type));
                    double[] want = Reference.regionalMaxima(hx, w, h, 1, 8, max);
                    assertArrayEquals(IwppNative.backendName(b) + " " + type + "-bit extended " + (max ? "maxima" : "minima"),
                            want, IwppNativeTest.fromSlices(out), 0);
                }
            }
    }

    @Test
    public void imposeMinimaHandChecked() {
        /* m = 0 on the marker, 255 elsewhere; g = min(m, in + 1) = {6, 0, 6, 2, 6}: the basin at x=3
           (value 1) is filled to the spill level 6 towards the marker */
        double[] in = { 5, 3, 5, 1, 5 };
        double[] mk = { 0, 9, 0, 0, 0 };
        for (final int b : IwppNativeTest.backends) {
            final Object[] src = gray(in, U8, 5, 1, 1), m = gray(mk, F32, 5, 1, 1);
            final Object[] out = IwppNativeTest.empty(U8, 5, 1, 1);
            if (!runs(b, "impose minima", new Call() {
                public void run() {
                    IwppNative.imposeMinima(b, 0, 0, src, m, 5, 1, 4, out);
                }
            }))
                continue;
            assertArrayEquals(new double[] { 6, 0, 6, 6, 6 }, IwppNativeTest.fromSlices(out), 0);
            assertArrayEquals("input untouched", in, IwppNativeTest.fromSlices(src), 0);
        }
        /* F32: -Infinity on the marker; the basin at x=2 (0.25) fills to the spill level, the next float
           above the 2.0 between it and the marker */
        float[][] f = { { 0.5f, 2.0f, 0.25f } };
        float[][] o = new float[1][3];
        IwppNative.imposeMinima(IwppNative.BACKEND_CPU, 0, 0, f, new byte[][] { { 1, 0, 0 } }, 3, 1, 4, o);
        assertArrayEquals(new float[] { Float.NEGATIVE_INFINITY, Math.nextUp(2.0f), Math.nextUp(2.0f) }, o[0], 0);
    }

    /* ------------------------------------------------------------ label filters */

    @Test
    public void removeBorderLabelsAndSizeFilter() {
        /* 6x5 labels: 1 touches the left border, 2 (3 pixels) and 3 (1 pixel) are inside, 4 touches the bottom */
        long[] a = { 0, 0, 0, 0, 0, 0,
                     1, 0, 2, 2, 0, 0,
                     1, 0, 2, 0, 3, 0,
                     0, 0, 0, 0, 0, 0,
                     0, 4, 4, 0, 0, 0 };
        long[] noBorder = a.clone(), sized = a.clone();
        for (int i = 0; i < a.length; i++) {
            if (a[i] == 1 || a[i] == 4)
                noBorder[i] = 0;
            if (a[i] == 3 || a[i] == 2) // min 2 removes 3 (1 px), max 2 removes 2 (3 px)
                sized[i] = 0;
        }
        for (final int b : IwppNativeTest.backends)
            for (final int kind : new int[] { 8, 16, 32 }) {
                final Object[] lab = kind == 8 ? IwppNativeTest.toSlices(toDoubles(a), U8, 6, 5, 1)
                        : labelSlices(a, kind == 16, 6, 5, 1);
                final Object[] out1 = kind == 8 ? new byte[1][30] : labelSlices(new long[30], kind == 16, 6, 5, 1);
                final Object[] out2 = kind == 8 ? new byte[1][30] : labelSlices(new long[30], kind == 16, 6, 5, 1);
                IwppNative.removeBorderLabels(b, 0, 0, lab, 6, 5, out1);
                IwppNative.labelSizeFilter(b, 0, 0, lab, 6, 5, 2, 2, out2);
                assertArrayEquals(kind + "-bit border", noBorder, kind == 8 ? longs(out1) : fromLabels(out1));
                assertArrayEquals(kind + "-bit size", sized, kind == 8 ? longs(out2) : fromLabels(out2));
            }
    }

    static long[] longs(Object[] bytes) {
        double[] d = IwppNativeTest.fromSlices(bytes);
        long[] l = new long[d.length];
        for (int i = 0; i < d.length; i++)
            l[i] = (long) d[i];
        return l;
    }

    /* ------------------------------------------------------------ cancel */

    @Test
    public void aCancelledCallThrowsAndWritesNothing() {
        final int w = 40, h = 30;
        final Object[] in = gray(twoDiscs(w, h, 8, 12), U8, w, h, 1);
        IwppNative.Progress stop = new IwppNative.Progress() {
            public boolean update(double fraction) {
                return true;
            }
        };
        for (int op = 0; op < 3; op++) {
            short[][] lab = new short[1][w * h];
            java.util.Arrays.fill(lab[0], (short) 9);
            try {
                if (op == 0)
                    IwppNative.label(IwppNative.BACKEND_CPU, 0, 0, 0L, null, stop, in, w, h, 8,
                            IwppNative.LABEL_BINARY, lab);
                else if (op == 1)
                    IwppNative.watershed(IwppNative.BACKEND_CPU, 0, 0, 0L, null, stop, in, new short[1][w * h], null, w, h,
                            8, true, lab);
                else
                    IwppNative.distanceWatershed(IwppNative.BACKEND_CPU, 0, 0, 0L, null, stop, in, w, h, 1, 1, 1,
                            0.5, 8, false, lab);
                fail("operation " + op + " was not cancelled");
            } catch (IwppCancelledException e) {
                for (short v : lab[0])
                    assertEquals("a cancelled call writes nothing (operation " + op + ")", 9, v);
            }
        }
    }

    /* ------------------------------------------------------------ bad input */

    static void refused(String contains, Call c) {
        try {
            c.run();
            fail("not refused: " + contains);
        } catch (IllegalArgumentException e) {
            assertTrue("\"" + e.getMessage() + "\" should contain \"" + contains + "\"", e.getMessage().contains(contains));
        }
    }

    @Test
    public void badInputIsAnExceptionWithTheReason() {
        final int cpu = IwppNative.BACKEND_CPU;
        final byte[][] in = new byte[1][12];
        final short[][] lab = new short[1][12];
        final int[][] labSmall = new int[1][11];
        refused("mode must be 0 (binary) or 1 (equal values), not 5", new Call() {
            public void run() {
                IwppNative.label(cpu, 0, 0, in, 4, 3, 8, 5, lab);
            }
        });
        refused("labels: slice 1 is a byte[] but must be a short[] or int[]", new Call() {
            public void run() {
                IwppNative.label(cpu, 0, 0, in, 4, 3, 8, IwppNative.LABEL_BINARY, new byte[1][12]);
            }
        });
        refused("labels: slice 1 has 11 pixels but width x height is 4 x 3 = 12", new Call() {
            public void run() {
                IwppNative.label(cpu, 0, 0, in, 4, 3, 8, IwppNative.LABEL_BINARY, labSmall);
            }
        });
        refused("markers: slice 1 is a float[] but must be a byte[], short[] or int[]", new Call() {
            public void run() {
                IwppNative.watershed(cpu, 0, 0, in, new float[1][12], null, 4, 3, 8, false, lab);
            }
        });
        refused("markers is null", new Call() {
            public void run() {
                IwppNative.watershed(cpu, 0, 0, in, null, null, 4, 3, 8, false, lab);
            }
        });
        refused("mask has 2 slices but in has 1", new Call() {
            public void run() {
                IwppNative.watershed(cpu, 0, 0, in, new short[1][12], new byte[2][12], 4, 3, 8, false, lab);
            }
        });
        refused("connectivity", new Call() {
            public void run() {
                IwppNative.label(cpu, 0, 0, in, 4, 3, 5, IwppNative.LABEL_BINARY, lab);
            }
        });
        refused("dynamic", new Call() {
            public void run() {
                IwppNative.distanceWatershed(cpu, 0, 0, in, 4, 3, 1, 1, 1, Double.NaN, 8, false, lab);
            }
        });
        refused("minimum (-1) and maximum (0) sizes must be >= 0 pixels", new Call() {
            public void run() {
                IwppNative.labelSizeFilter(cpu, 0, 0, lab, 4, 3, -1, 0, new short[1][12]);
            }
        });
        refused("out: slice 1 is a int[] but must be a short[]", new Call() {
            public void run() {
                IwppNative.removeBorderLabels(cpu, 0, 0, lab, 4, 3, new int[1][12]);
            }
        });
        refused("out is null", new Call() {
            public void run() {
                IwppNative.extendedMaxima(cpu, 0, 0, in, 4, 3, 1, 8, null);
            }
        });
        refused("in: slice 1 is a int[] but must be a byte[], short[] or float[]", new Call() {
            public void run() {
                IwppNative.imposeMinima(cpu, 0, 0, new int[1][12], in, 4, 3, 8, new int[1][12]);
            }
        });
    }
}
