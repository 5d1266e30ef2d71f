/*
 * TilesTest.java - the tile settings through JNI: a memory budget and worker
 * lists (results bit-identical to the in-memory call), the tile figures in
 * lastStats, progress listeners, cancelling (IwppCancelledException, the
 * caller's arrays untouched) and the checks of bad settings.
 *
 * The images are spirals: a one-pixel corridor of random levels winding to the
 * centre between walls of lower random levels, seeded at the corridor's outer
 * end, so that propagation crosses every tile many times.
 */
package iwpp;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.junit.BeforeClass;
import org.junit.Test;

public class TilesTest {
    static final int W = 300, H = 200;
    /** Small enough for hundreds of tile runs on a 300x200 spiral on every backend. */
    static final long TINY_BUDGET = 20000;
    static final int CPU = IwppNative.BACKEND_CPU;
    static List<Integer> backends = new ArrayList<Integer>();

    @BeforeClass
    public static void load() {
        IwppNative.requireLoaded();
        /* the CPU and OpenCL (PoCL in CI), and CUDA where there is one; -Diwpp.test.backends narrows it */
        String only = System.getProperty("iwpp.test.backends", "");
        for (int b = IwppNative.BACKEND_CPU; b <= IwppNative.BACKEND_OPENCL; b++)
            if (IwppNative.backendAvailable(b)
                    && (only.isEmpty() || ("," + only + ",").contains("," + IwppNative.backendName(b) + ",")))
                backends.add(b);
        System.out.println("TilesTest: backends " + backends);
    }

    /* ------------------------------------------------------------ images */

    /** Corridor pixels of a square spiral from (0, 0) inwards, walls one pixel thick. */
    static boolean[] spiralPath(int w, int h) {
        boolean[] p = new boolean[w * h];
        int x0 = 0, y0 = 0, x1 = w - 1, y1 = h - 1;
        while (x0 <= x1 && y0 <= y1) {
            for (int x = x0; x <= x1; x++)
                p[y0 * w + x] = true;
            for (int y = y0; y <= y1; y++)
                p[y * w + x1] = true;
            if (y1 > y0)
                for (int x = x1; x >= x0; x--)
                    p[y1 * w + x] = true;
            if (x1 > x0)
                for (int y = y1; y >= y0 + 2; y--)
                    p[y * w + x0] = true;
            if (y0 + 2 <= y1 && x0 + 1 <= x1)
                p[(y0 + 2) * w + x0 + 1] = true; // the step into the next ring
            x0 += 2;
            y0 += 2;
            x1 -= 2;
            y1 -= 2;
        }
        return p;
    }

    /** A spiral mask of @p bits (8, 16, 32): corridor levels 40..255, walls 0..29 (scaled for 16/32-bit). */
    static Object[] spiralMask(int bits, int w, int h, long seed) {
        boolean[] p = spiralPath(w, h);
        Random r = new Random(seed);
        int n = w * h;
        byte[] b = bits == 8 ? new byte[n] : null;
        short[] s = bits == 16 ? new short[n] : null;
        float[] f = bits == 32 ? new float[n] : null;
        for (int i = 0; i < n; i++) {
            int v = p[i] ? 40 + r.nextInt(216) : r.nextInt(30);
            if (b != null)
                b[i] = (byte) v;
            else if (s != null)
                s[i] = (short) (v * 257);
            else
                f[i] = v * 0.5f - 20f;
        }
        return bits == 8 ? new byte[][] { b } : bits == 16 ? (Object[]) new short[][] { s } : new float[][] { f };
    }

    /** The marker for @p mode: the type's extreme at the seed (0, 0), the opposite one elsewhere. */
    static Object[] seedMarker(int bits, int w, int h, int mode) {
        boolean dil = mode == IwppNative.BY_DILATION;
        int n = w * h;
        if (bits == 8) {
            byte[] a = new byte[n];
            java.util.Arrays.fill(a, (byte) (dil ? 0 : 255));
            a[0] = (byte) (dil ? 255 : 0);
            return new byte[][] { a };
        }
        if (bits == 16) {
            short[] a = new short[n];
            java.util.Arrays.fill(a, (short) (dil ? 0 : 65535));
            a[0] = (short) (dil ? 65535 : 0);
            return new short[][] { a };
        }
        float[] a = new float[n];
        java.util.Arrays.fill(a, dil ? -1000f : 1000f);
        a[0] = dil ? 1000f : -1000f;
        return new float[][] { a };
    }

    /** By erosion the corridor must be the low path: the mask turned upside down. */
    static Object[] maskFor(int bits, int w, int h, int mode, long seed) {
        Object[] m = spiralMask(bits, w, h, seed);
        if (mode == IwppNative.BY_DILATION)
            return m;
        Object s = m[0];
        if (s instanceof byte[])
            for (int i = 0; i < w * h; i++)
                ((byte[]) s)[i] = (byte) (255 - (((byte[]) s)[i] & 0xff));
        else if (s instanceof short[])
            for (int i = 0; i < w * h; i++)
                ((short[]) s)[i] = (short) (65535 - (((short[]) s)[i] & 0xffff));
        else
            for (int i = 0; i < w * h; i++)
                ((float[]) s)[i] = -((float[]) s)[i];
        return m;
    }

    static Object[] copy(Object[] a) {
        Object s = a[0];
        if (s instanceof byte[])
            return new byte[][] { ((byte[]) s).clone() };
        if (s instanceof short[])
            return new short[][] { ((short[]) s).clone() };
        return new float[][] { ((float[]) s).clone() };
    }

    /** Bit-exact comparison of one-slice images (floats by their bits). */
    static void assertSameImage(String what, Object[] want, Object[] got) {
        Object a = want[0], b = got[0];
        if (a instanceof byte[])
            assertArrayEquals(what, (byte[]) a, (byte[]) b);
        else if (a instanceof short[])
            assertArrayEquals(what, (short[]) a, (short[]) b);
        else {
            float[] x = (float[]) a, y = (float[]) b;
            assertEquals(what, x.length, y.length);
            for (int i = 0; i < x.length; i++)
                if (Float.floatToRawIntBits(x[i]) != Float.floatToRawIntBits(y[i]))
                    fail(what + ": pixel " + i + " is " + y[i] + ", want " + x[i]);
        }
    }

    /* ------------------------------------------------------------ tests */

    @Test
    public void tinyBudgetEqualsInMemoryBitForBit() {
        for (int backend : backends)
            for (int bits : new int[] { 8, 16, 32 })
                for (int conn : new int[] { 4, 8 })
                    for (int mode = 0; mode <= 1; mode++) {
                        String what = IwppNative.backendName(backend) + " " + bits + "-bit conn " + conn + " mode " + mode;
                        Object[] mask = maskFor(bits, W, H, mode, 7);
                        Object[] maskCopy = copy(mask);
                        /* the reference: the CPU in memory (default budget: no limit there) */
                        Object[] want = seedMarker(bits, W, H, mode);
                        IwppNative.reconstruct(CPU, 0, 0, 0L, null, null, want, mask, W, H, conn, mode);
                        assertEquals(what + ": reference ran in memory", 0.0,
                                IwppNative.lastStats()[IwppNative.STAT_TILES], 0.0);

                        Object[] got = seedMarker(bits, W, H, mode);
                        IwppNative.reconstruct(backend, 0, 0, TINY_BUDGET, null, null, got, mask, W, H, conn, mode);
                        double[] st = IwppNative.lastStats();
                        assertNotNull(st);
                        assertEquals(what, backend, (int) st[IwppNative.STAT_BACKEND]);
                        assertSameImage(what + ": tiled = in memory", want, got);
                        assertSameImage(what + ": mask untouched", maskCopy, mask);
                        /* many tiles, re-run as the spiral carries values across their borders */
                        assertTrue(what + ": tile grid " + st[IwppNative.STAT_TILE_GRID],
                                st[IwppNative.STAT_TILE_GRID] >= 12);
                        assertTrue(what + ": tile runs " + st[IwppNative.STAT_TILES],
                                st[IwppNative.STAT_TILES] >= 100);
                        assertTrue(what + ": tile rounds " + st[IwppNative.STAT_TILE_ROUNDS],
                                st[IwppNative.STAT_TILE_ROUNDS] > 1);
                        assertTrue(what + ": workers", st[IwppNative.STAT_WORKERS] >= 1);
                        if (backend != CPU)
                            assertTrue(what + ": bytes moved", st[IwppNative.STAT_BYTES_TO_DEVICE] > 0
                                    && st[IwppNative.STAT_BYTES_FROM_DEVICE] > 0);
                    }
    }

    @Test
    public void composedOperationWithBudgetAndListener() {
        /* fill holes (reconstruction by erosion inside) through tiles, watched by a listener */
        for (int backend : backends) {
            String what = IwppNative.backendName(backend);
            Object[] in = spiralMask(8, W, H, 11);
            Object[] want = new byte[][] { new byte[W * H] };
            IwppNative.fillHoles(CPU, 0, 0, in, W, H, 4, want);
            final List<Double> seen = new ArrayList<Double>();
            IwppNative.Progress watch = new IwppNative.Progress() {
                @Override
                public boolean update(double fraction) {
                    seen.add(fraction);
                    return false;
                }
            };
            Object[] got = new byte[][] { new byte[W * H] };
            IwppNative.fillHoles(backend, 0, 0, TINY_BUDGET, null, watch, in, W, H, 4, got);
            assertSameImage(what + " fill holes tiled", want, got);
            assertTrue(what + ": tiles ran", IwppNative.lastStats()[IwppNative.STAT_TILES] > 0);
            /* the library reports 1.0 at the end of each tiled call */
            assertTrue(what + ": the listener was called", !seen.isEmpty());
            for (double f : seen)
                assertTrue(what + ": fraction " + f, f >= 0 && f <= 1);
            assertEquals(what + ": last fraction", 1.0, seen.get(seen.size() - 1), 0.0);
        }
    }

    @Test
    public void workerListCpuTimesThree() {
        for (int mode = 0; mode <= 1; mode++) {
            Object[] mask = maskFor(16, W, H, mode, 3);
            Object[] want = seedMarker(16, W, H, mode);
            IwppNative.reconstruct(CPU, 0, 0, want, mask, W, H, 8, mode);
            Object[] got = seedMarker(16, W, H, mode);
            IwppNative.reconstruct(CPU, 0, 0, 0L, "cpu*3", null, got, mask, W, H, 8, mode);
            assertSameImage("cpu*3 mode " + mode, want, got);
            double[] st = IwppNative.lastStats();
            assertEquals("three workers", 3.0, st[IwppNative.STAT_WORKERS], 0.0);
            long[] per = IwppNative.lastWorkerTiles();
            assertEquals("tile runs of each worker", 3, per.length);
            long sum = 0;
            for (long t : per)
                sum += t;
            assertEquals("the workers' runs add up", (long) st[IwppNative.STAT_TILES], sum);
        }
        /* the list belongs to the thread's context only while it is passed: null goes back to memory */
        Object[] mask = maskFor(8, W, H, 0, 3);
        IwppNative.reconstruct(CPU, 0, 0, 0L, null, null, seedMarker(8, W, H, 0), mask, W, H, 8, 0);
        assertEquals("no list: in memory", 0.0, IwppNative.lastStats()[IwppNative.STAT_TILES], 0.0);
        assertEquals("no list: no worker tiles", 0, IwppNative.lastWorkerTiles().length);
    }

    /** A spiral big enough that a tiled call runs well past the first progress report (100 ms). */
    static final int BIG_W = 2400, BIG_H = 1800;

    @Test
    public void cancelAtFirstUpdateLeavesTheArraysUntouched() {
        Object[] mask = spiralMask(8, BIG_W, BIG_H, 5);
        Object[] marker = seedMarker(8, BIG_W, BIG_H, 0);
        Object[] maskCopy = copy(mask), markerCopy = copy(marker);
        final int[] calls = { 0 };
        IwppNative.Progress cancel = new IwppNative.Progress() {
            @Override
            public boolean update(double fraction) {
                calls[0]++;
                return true;
            }
        };
        long t0 = System.nanoTime();
        try {
            IwppNative.reconstruct(CPU, 0, 0, TINY_BUDGET, null, cancel, marker, mask, BIG_W, BIG_H, 8, 0);
            /* a machine fast enough to finish before the first report: acceptable, but say so */
            assertEquals("finished: only the final report", 1, calls[0]);
            System.out.println("TilesTest: the big spiral finished before the first progress report ("
                    + (System.nanoTime() - t0) / 1000000 + " ms); the cancel was not exercised");
            return;
        } catch (IwppCancelledException e) {
            assertEquals(IwppNative.ECANCELED, e.getStatus());
            assertTrue(e.getMessage(), e.getMessage().contains("cancel"));
        }
        System.out.println("TilesTest: cancelled after " + (System.nanoTime() - t0) / 1000000 + " ms");
        assertEquals("the listener was asked once", 1, calls[0]);
        assertSameImage("marker untouched", markerCopy, marker);
        assertSameImage("mask untouched", maskCopy, mask);
        /* the thread's context works on after a cancel */
        Object[] small = seedMarker(8, W, H, 0), smallMask = spiralMask(8, W, H, 1);
        Object[] want = copy(small);
        IwppNative.reconstruct(CPU, 0, 0, want, smallMask, W, H, 8, 0);
        IwppNative.reconstruct(CPU, 0, 0, TINY_BUDGET, null, null, small, smallMask, W, H, 8, 0);
        assertSameImage("after a cancel", want, small);
    }

    @Test
    public void listenerExceptionCancelsAndIsRethrown() {
        Object[] in = spiralMask(8, BIG_W, BIG_H, 9);
        byte[][] out = new byte[][] { new byte[BIG_W * BIG_H] };
        java.util.Arrays.fill(out[0], (byte) 77);
        final IllegalStateException boom = new IllegalStateException("listener failed");
        IwppNative.Progress thrower = new IwppNative.Progress() {
            @Override
            public boolean update(double fraction) {
                throw boom;
            }
        };
        try {
            IwppNative.fillHoles(CPU, 0, 0, TINY_BUDGET, null, thrower, in, BIG_W, BIG_H, 8, out);
            fail("the listener's exception was not rethrown");
        } catch (IllegalStateException e) {
            assertSame(boom, e);
        }
        for (byte v : out[0])
            if (v != 77)
                fail("the output was written after the listener failed");
    }

    @Test
    public void badSettingsThrowIllegalArgument() {
        Object[] mask = spiralMask(8, 20, 10, 1);
        final Object[] marker = seedMarker(8, 20, 10, 0);
        Object[] markerCopy = copy(marker);
        String[] bad = { "gpu*0", "nonsense", "cpu*", "cpu,,tpu", "cuda:9999", "cpu*100000" };
        for (String spec : bad) {
            try {
                IwppNative.reconstruct(CPU, 0, 0, 0L, spec, null, marker, mask, 20, 10, 8, 0);
                fail("worker list \"" + spec + "\" accepted");
            } catch (IllegalArgumentException e) {
                assertTrue(spec + ": " + e.getMessage(), e.getMessage().contains("worker list"));
            }
            try {
                IwppNative.checkWorkers(CPU, 0, 0, spec);
                fail("checkWorkers accepted \"" + spec + "\"");
            } catch (IllegalArgumentException e) {
                assertTrue(spec + ": " + e.getMessage(), e.getMessage().contains("worker list"));
            }
        }
        for (long limit : new long[] { -1, Long.MIN_VALUE }) {
            try {
                IwppNative.reconstruct(CPU, 0, 0, limit, null, null, marker, mask, 20, 10, 8, 0);
                fail("memory limit " + limit + " accepted");
            } catch (IllegalArgumentException e) {
                assertTrue(e.getMessage(), e.getMessage().contains("memory limit"));
            }
        }
        try {
            IwppNative.distanceTransform(CPU, 0, 0, -5L, null, null, mask, 20, 10, IwppNative.EDT_EXACT, 1, 1, 1,
                    new float[1][200], null);
            fail("negative limit accepted by the distance transform");
        } catch (IllegalArgumentException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("memory limit"));
        }
        assertSameImage("marker untouched by refused calls", markerCopy, marker);
        /* good lists pass the check, and the thread's context still works after the refusals */
        IwppNative.checkWorkers(CPU, 0, 0, null);
        IwppNative.checkWorkers(CPU, 0, 0, "");
        IwppNative.checkWorkers(CPU, 0, 2, "gpu*2, cpu*3");
        Object[] want = copy(marker);
        IwppNative.reconstruct(CPU, 0, 0, want, mask, 20, 10, 8, 0);
        IwppNative.reconstruct(CPU, 0, 0, 0L, "cpu*2", null, marker, mask, 20, 10, 8, 0);
        assertSameImage("after refused lists", want, marker);
    }
}
