/*
 * IwppNativeTest.java - JUnit 4 tests of iwpp.IwppNative (the JNI layer):
 * every pixel type, 2D and 3D (stacks as arrays of slices), every operation
 * against the plain definitions in Reference.java, every built and usable
 * backend, bad input (an exception, never a crash, output untouched) and
 * 8 threads calling at once.
 */
package iwpp;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.BeforeClass;
import org.junit.Test;

public class IwppNativeTest {
    static final int U8 = 8, U16 = 16, F32 = 32;
    static final int[] TYPES = { U8, U16, F32 };
    static List<Integer> backends = new ArrayList<Integer>();

    @BeforeClass
    public static void load() {
        IwppNative.requireLoaded();
        /* every usable backend, or those named in -Diwpp.test.backends=cpu,opencl */
        String only = System.getProperty("iwpp.test.backends", "");
        for (int b = IwppNative.BACKEND_CPU; b <= IwppNative.BACKEND_OPENCL; b++)
            if (IwppNative.backendAvailable(b)
                    && (only.isEmpty() || ("," + only + ",").contains("," + IwppNative.backendName(b) + ",")))
                backends.add(b);
        System.out.println("IwppNativeTest: library " + IwppNative.libraryLocation() + ", backends " + backends);
    }

    /* ------------------------------------------------------------ helpers */

    /** Random image as doubles: values in [0, levels) (scaled for F32), with some plateaus. */
    static double[] random(Random r, int n, int type, int levels) {
        double[] a = new double[n];
        for (int i = 0; i < n; i++) {
            int v = r.nextInt(levels);
            a[i] = type == F32 ? v * 0.75 - 3.0 : type == U16 ? v * 257 : v;
        }
        return a;
    }

    static Object[] toSlices(double[] a, int type, int w, int h, int d) {
        int p = w * h;
        Object[] s = type == U8 ? new byte[d][] : type == U16 ? new short[d][] : new float[d][];
        for (int z = 0; z < d; z++) {
            if (type == U8) {
                byte[] b = new byte[p];
                for (int i = 0; i < p; i++)
                    b[i] = (byte) (int) a[z * p + i];
                s[z] = b;
            } else if (type == U16) {
                short[] b = new short[p];
                for (int i = 0; i < p; i++)
                    b[i] = (short) (int) a[z * p + i];
                s[z] = b;
            } else {
                float[] b = new float[p];
                for (int i = 0; i < p; i++)
                    b[i] = (float) a[z * p + i];
                s[z] = b;
            }
        }
        return s;
    }

    static double[] fromSlices(Object[] s) {
        int p = s[0] instanceof byte[] ? ((byte[]) s[0]).length
                : s[0] instanceof short[] ? ((short[]) s[0]).length : ((float[]) s[0]).length;
        double[] a = new double[p * s.length];
        for (int z = 0; z < s.length; z++)
            for (int i = 0; i < p; i++)
                a[z * p + i] = s[z] instanceof byte[] ? ((byte[]) s[z])[i] & 0xff
                        : s[z] instanceof short[] ? ((short[]) s[z])[i] & 0xffff : ((float[]) s[z])[i];
        return a;
    }

    static Object[] empty(int type, int w, int h, int d) {
        return toSlices(new double[w * h * d], type, w, h, d);
    }

    static double typeMax(int type) {
        return type == U8 ? 255 : type == U16 ? 65535 : Double.POSITIVE_INFINITY;
    }

    static double typeMin(int type) {
        return type == F32 ? Double.NEGATIVE_INFINITY : 0;
    }

    static String what(int backend, int type, int w, int h, int d, int conn) {
        return IwppNative.backendName(backend) + " " + type + "-bit " + w + "x" + h + "x" + d + " conn " + conn;
    }

    static int[] conns(int d) {
        return d == 1 ? new int[] { 4, 8 } : new int[] { 6, 18, 26 };
    }

    /* --------------------------------------------------------- the tests */

    @Test
    public void loadedFromTheJarIntoTheCache() {
        String cache = System.getenv("XDG_CACHE_HOME");
        if (cache != null && System.getProperty("iwpp.jni.library") == null)
            assertTrue(IwppNative.libraryLocation(),
                    IwppNative.libraryLocation().startsWith(new File(cache, "iwpp").getAbsolutePath()));
    }

    @Test
    public void versionsAgree() {
        assertEquals(IwppNative.VERSION, IwppNative.version());
    }

    @Test
    public void cpuIsAlwaysThere() {
        assertNull(IwppNative.backendUnavailableReason(IwppNative.BACKEND_CPU));
        assertEquals(1, IwppNative.deviceCount(IwppNative.BACKEND_CPU));
        long[] num = new long[3];
        String[] info = IwppNative.deviceInfo(IwppNative.BACKEND_CPU, 0, num);
        assertEquals(2, info.length);
        assertTrue(num[1] >= 1);
        assertEquals(0, num[2]);
        for (int b = IwppNative.BACKEND_CUDA; b <= IwppNative.BACKEND_OPENCL; b++)
            if (!IwppNative.backendAvailable(b))
                assertTrue(IwppNative.backendUnavailableReason(b).length() > 0);
    }

    @Test
    public void reconstructionEveryTypeConnectivityModeAndBackend() {
        Random r = new Random(1);
        int[][] sizes = { { 37, 23, 1 }, { 1, 17, 1 }, { 13, 9, 4 } };
        for (int backend : backends)
            for (int type : TYPES)
                for (int[] sz : sizes)
                    for (int conn : conns(sz[2]))
                        for (int mode = 0; mode <= 1; mode++) {
                            int w = sz[0], h = sz[1], d = sz[2], n = w * h * d;
                            double[] mask = random(r, n, type, 9);
                            double[] marker = random(r, n, type, 9);
                            Object[] mk = toSlices(marker, type, w, h, d);
                            Object[] ms = toSlices(mask, type, w, h, d);
                            Object[] maskCopy = toSlices(mask, type, w, h, d);
                            IwppNative.reconstruct(backend, 0, 0, mk, ms, w, h, conn, mode);
                            double[] want = Reference.reconstruct(marker, mask, w, h, d, conn,
                                    mode == IwppNative.BY_DILATION);
                            String m = what(backend, type, w, h, d, conn) + " mode " + mode;
                            assertArrayEquals(m, want, fromSlices(mk), 0.0);
                            assertArrayEquals(m + " (mask untouched)", fromSlices(maskCopy), fromSlices(ms), 0.0);
                            double[] st = IwppNative.lastStats();
                            assertNotNull(st);
                            assertEquals(m, backend, (int) st[IwppNative.STAT_BACKEND]);
                        }
    }

    @Test
    public void composedOperationsEveryType() {
        Random r = new Random(2);
        int[][] sizes = { { 19, 14, 1 }, { 8, 7, 3 } };
        for (int backend : backends)
            for (int type : TYPES)
                for (int[] sz : sizes)
                    for (int conn : conns(sz[2])) {
                        int w = sz[0], h = sz[1], d = sz[2], n = w * h * d;
                        double[] a = random(r, n, type, 6);
                        Object[] in = toSlices(a, type, w, h, d);
                        String m = what(backend, type, w, h, d, conn);
                        double step = type == F32 ? 0.75 : type == U16 ? 257 : 1;

                        Object[] out = empty(type, w, h, d);
                        IwppNative.fillHoles(backend, 0, 0, in, w, h, conn, out);
                        assertArrayEquals(m + " fill", Reference.fillHoles(a, w, h, d, conn, typeMax(type)),
                                fromSlices(out), 0.0);
                        IwppNative.killBorders(backend, 0, 0, in, w, h, conn, out);
                        assertArrayEquals(m + " kill", Reference.killBorders(a, w, h, d, conn, typeMin(type)),
                                fromSlices(out), 1e-6);
                        byte[][] bin = new byte[d][w * h];
                        IwppNative.regionalMaxima(backend, 0, 0, in, w, h, conn, bin);
                        assertArrayEquals(m + " rmax", Reference.regionalMaxima(a, w, h, d, conn, true),
                                fromSlices(bin), 0.0);
                        IwppNative.regionalMinima(backend, 0, 0, in, w, h, conn, bin);
                        assertArrayEquals(m + " rmin", Reference.regionalMaxima(a, w, h, d, conn, false),
                                fromSlices(bin), 0.0);
                        double hv = 2 * step;
                        IwppNative.hMaxima(backend, 0, 0, in, w, h, hv, conn, out);
                        assertArrayEquals(m + " hmax", Reference.hMaxima(a, w, h, d, conn, hv, typeMin(type)),
                                fromSlices(out), 1e-5);
                        IwppNative.hMinima(backend, 0, 0, in, w, h, hv, conn, out);
                        assertArrayEquals(m + " hmin", Reference.hMinima(a, w, h, d, conn, hv, typeMax(type)),
                                fromSlices(out), 1e-5);
                        for (int radius = 0; radius <= 2; radius++) {
                            IwppNative.openingByReconstruction(backend, 0, 0, in, w, h, radius, conn, out);
                            assertArrayEquals(m + " open r" + radius,
                                    Reference.openingByReconstruction(a, w, h, d, conn, radius, true),
                                    fromSlices(out), 0.0);
                            IwppNative.closingByReconstruction(backend, 0, 0, in, w, h, radius, conn, out);
                            assertArrayEquals(m + " close r" + radius,
                                    Reference.openingByReconstruction(a, w, h, d, conn, radius, false),
                                    fromSlices(out), 0.0);
                        }
                        assertArrayEquals(m + " input untouched", a, fromSlices(in), 0.0);
                    }
    }

    @Test
    public void binaryFillHolesKnownResult() {
        /* a ring with a hole; background connectivity 4 fills it, and a diagonal gap only leaks with 8 */
        int w = 7, h = 7;
        byte[] img = new byte[w * h];
        for (int y = 1; y <= 5; y++)
            for (int x = 1; x <= 5; x++)
                if (x == 1 || x == 5 || y == 1 || y == 5)
                    img[x + y * w] = (byte) 255;
        byte[][] out = new byte[1][w * h];
        for (int backend : backends) {
            IwppNative.fillHoles(backend, 0, 0, new Object[] { img }, w, h, 4, out);
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    boolean inside = x >= 1 && x <= 5 && y >= 1 && y <= 5;
                    assertEquals(x + "," + y, inside ? 255 : 0, out[0][x + y * w] & 0xff);
                }
        }
    }

    @Test
    public void distanceTransformExactAndDanielsson() {
        Random r = new Random(3);
        int[][] sizes = { { 23, 17, 1 }, { 9, 8, 5 } };
        double[][] spacings = { { 1, 1, 1 }, { 0.5, 1.25, 2.0 } };
        for (int backend : backends)
            for (int type : TYPES)
                for (int[] sz : sizes)
                    for (double[] sp : spacings) {
                        int w = sz[0], h = sz[1], d = sz[2], n = w * h * d;
                        double[] a = new double[n];
                        for (int i = 0; i < n; i++)
                            a[i] = r.nextInt(10) < 8 ? (type == F32 ? 0.5 : 1) : 0;
                        Object[] in = toSlices(a, type, w, h, d);
                        double[] want = Reference.edt(a, w, h, d, sp[0], sp[1], sp[2]);
                        String m = what(backend, type, w, h, d, 0) + " spacing " + sp[0] + "," + sp[1] + "," + sp[2];
                        float[][] dist = new float[d][w * h];
                        long[][] near = new long[d][w * h];
                        IwppNative.distanceTransform(backend, 0, 0, in, w, h, IwppNative.EDT_EXACT, sp[0], sp[1],
                                sp[2], dist, near);
                        double[] got = fromSlices(dist);
                        for (int i = 0; i < n; i++) {
                            assertEquals(m + " at " + i, want[i], got[i], 1e-4 * Math.max(1, want[i]));
                            long j = near[i / (w * h)][i % (w * h)];
                            assertTrue(m + " nearest at " + i, j >= 0 && j < n && a[(int) j] == 0);
                            int x = i % w, y = (i / w) % h, z = i / (w * h);
                            int jj = (int) j;
                            double dx = (jj % w - x) * sp[0], dy = ((jj / w) % h - y) * sp[1],
                                    dz = (jj / (w * h) - z) * sp[2];
                            assertEquals(m + " nearest distance at " + i, want[i],
                                    Math.sqrt(dx * dx + dy * dy + dz * dz), 1e-4 * Math.max(1, want[i]));
                        }
                        IwppNative.distanceTransform(backend, 0, 0, in, w, h, IwppNative.EDT_DANIELSSON, sp[0],
                                sp[1], sp[2], dist, null);
                        got = fromSlices(dist);
                        for (int i = 0; i < n; i++) {
                            assertTrue(m + " danielsson below exact at " + i, got[i] >= want[i] - 1e-4 * Math.max(1, want[i]));
                            if (want[i] == 0)
                                assertEquals(m + " danielsson background at " + i, 0.0, got[i], 0.0);
                        }
                    }
    }

    @Test
    public void distanceWithoutBackgroundIsInfinite() {
        byte[] img = new byte[12];
        java.util.Arrays.fill(img, (byte) 1);
        float[][] dist = new float[1][12];
        long[][] near = new long[1][12];
        IwppNative.distanceTransform(IwppNative.BACKEND_CPU, 0, 0, new Object[] { img }, 4, 3,
                IwppNative.EDT_EXACT, 1, 1, 1, dist, near);
        for (int i = 0; i < 12; i++) {
            assertTrue(Float.isInfinite(dist[0][i]));
            assertEquals(-1L, near[0][i]);
        }
    }

    /* ------------------------------------------------------- bad input */

    interface Call {
        void run();
    }

    static void expect(Class<? extends RuntimeException> type, String what, Call c) {
        try {
            c.run();
            fail(what + ": no exception");
        } catch (RuntimeException e) {
            assertTrue(what + ": got " + e, type.isInstance(e));
            assertTrue(what + ": empty message", e.getMessage() != null && e.getMessage().length() > 5);
        }
    }

    @Test
    public void badInputThrowsAndWritesNothing() {
        final byte[] a = new byte[20];
        final byte[] b = new byte[20];
        final short[] s = new short[20];
        final byte[] sentinel = new byte[20];
        java.util.Arrays.fill(sentinel, (byte) 77);
        final Class<IllegalArgumentException> IAE = IllegalArgumentException.class;
        expect(IAE, "null marker", new Call() {
            public void run() {
                IwppNative.reconstruct(1, 0, 0, null, new Object[] { b }, 5, 4, 8, 0);
            }
        });
        expect(IAE, "null slice", new Call() {
            public void run() {
                IwppNative.reconstruct(1, 0, 0, new Object[] { null }, new Object[] { b }, 5, 4, 8, 0);
            }
        });
        expect(IAE, "no slice", new Call() {
            public void run() {
                IwppNative.fillHoles(1, 0, 0, new Object[0], 5, 4, 4, new Object[0]);
            }
        });
        expect(IAE, "wrong slice length", new Call() {
            public void run() {
                IwppNative.reconstruct(1, 0, 0, new Object[] { a }, new Object[] { b }, 5, 5, 8, 0);
            }
        });
        expect(IAE, "negative width", new Call() {
            public void run() {
                IwppNative.reconstruct(1, 0, 0, new Object[] { a }, new Object[] { b }, -5, -4, 8, 0);
            }
        });
        expect(IAE, "not a pixel array", new Call() {
            public void run() {
                IwppNative.reconstruct(1, 0, 0, new Object[] { "x" }, new Object[] { b }, 5, 4, 8, 0);
            }
        });
        expect(IAE, "int[] slice", new Call() {
            public void run() {
                IwppNative.fillHoles(1, 0, 0, new Object[] { new int[20] }, 5, 4, 4, new Object[] { new int[20] });
            }
        });
        expect(IAE, "mixed slice types", new Call() {
            public void run() {
                IwppNative.fillHoles(1, 0, 0, new Object[] { a, s }, 5, 4, 6, new Object[] { b, new short[20] });
            }
        });
        expect(IAE, "marker and mask types differ", new Call() {
            public void run() {
                IwppNative.reconstruct(1, 0, 0, new Object[] { a }, new Object[] { s }, 5, 4, 8, 0);
            }
        });
        expect(IAE, "marker and mask depths differ", new Call() {
            public void run() {
                IwppNative.reconstruct(1, 0, 0, new Object[] { a, b }, new Object[] { b }, 5, 4, 8, 0);
            }
        });
        expect(IAE, "connectivity 5", new Call() {
            public void run() {
                IwppNative.reconstruct(1, 0, 0, new Object[] { a }, new Object[] { b }, 5, 4, 5, 0);
            }
        });
        expect(IAE, "connectivity 4 in 3D", new Call() {
            public void run() {
                IwppNative.fillHoles(1, 0, 0, new Object[] { a, b }, 5, 4, 4, new Object[] { sentinel, sentinel.clone() });
            }
        });
        byte[] check = new byte[20];
        java.util.Arrays.fill(check, (byte) 77);
        assertArrayEquals("output untouched after a failed call", check, sentinel);
        expect(IAE, "mode 7", new Call() {
            public void run() {
                IwppNative.reconstruct(1, 0, 0, new Object[] { a }, new Object[] { b }, 5, 4, 8, 7);
            }
        });
        expect(IAE, "backend 9", new Call() {
            public void run() {
                IwppNative.fillHoles(9, 0, 0, new Object[] { a }, 5, 4, 4, new Object[] { b });
            }
        });
        expect(IAE, "negative threads", new Call() {
            public void run() {
                IwppNative.fillHoles(1, 0, -2, new Object[] { a }, 5, 4, 4, new Object[] { b });
            }
        });
        expect(IAE, "out of the wrong type", new Call() {
            public void run() {
                IwppNative.fillHoles(1, 0, 0, new Object[] { a }, 5, 4, 4, new Object[] { s });
            }
        });
        expect(IAE, "out with too few slices", new Call() {
            public void run() {
                IwppNative.fillHoles(1, 0, 0, new Object[] { a, b }, 5, 4, 6, new Object[] { sentinel });
            }
        });
        expect(IAE, "regional maxima output too short", new Call() {
            public void run() {
                IwppNative.regionalMaxima(1, 0, 0, new Object[] { s }, 5, 4, 8, new byte[][] { new byte[19] });
            }
        });
        expect(IAE, "negative h", new Call() {
            public void run() {
                IwppNative.hMaxima(1, 0, 0, new Object[] { a }, 5, 4, -1, 8, new Object[] { b });
            }
        });
        expect(IAE, "NaN h", new Call() {
            public void run() {
                IwppNative.hMinima(1, 0, 0, new Object[] { a }, 5, 4, Double.NaN, 8, new Object[] { b });
            }
        });
        expect(IAE, "negative radius", new Call() {
            public void run() {
                IwppNative.openingByReconstruction(1, 0, 0, new Object[] { a }, 5, 4, -1, 8, new Object[] { b });
            }
        });
        expect(IAE, "NaN pixel", new Call() {
            public void run() {
                float[] f = new float[20];
                f[3] = Float.NaN;
                IwppNative.fillHoles(1, 0, 0, new Object[] { f }, 5, 4, 4, new Object[] { new float[20] });
            }
        });
        expect(IAE, "zero spacing", new Call() {
            public void run() {
                IwppNative.distanceTransform(1, 0, 0, new Object[] { a }, 5, 4, 0, 0, 1, 1, new float[][] { new float[20] }, null);
            }
        });
        expect(IAE, "EDT method 3", new Call() {
            public void run() {
                IwppNative.distanceTransform(1, 0, 0, new Object[] { a }, 5, 4, 3, 1, 1, 1, new float[][] { new float[20] }, null);
            }
        });
        expect(IAE, "EDT null output", new Call() {
            public void run() {
                IwppNative.distanceTransform(1, 0, 0, new Object[] { a }, 5, 4, 0, 1, 1, 1, null, null);
            }
        });
        expect(IAE, "device info of a missing device", new Call() {
            public void run() {
                IwppNative.deviceInfo(1, 0, new long[1]);
            }
        });
        try {
            IwppNative.deviceInfo(IwppNative.BACKEND_CPU, 5, null);
            fail("CPU device 5");
        } catch (RuntimeException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("device"));
        }
        /* an explicitly requested backend that is not there: IwppException (EDEVICE) with the reason */
        for (int bk = IwppNative.BACKEND_CUDA; bk <= IwppNative.BACKEND_OPENCL; bk++) {
            if (IwppNative.backendAvailable(bk))
                continue;
            try {
                IwppNative.fillHoles(bk, 0, 0, new Object[] { a }, 5, 4, 4, new Object[] { b });
                fail(IwppNative.backendName(bk) + " is not available but ran");
            } catch (IwppException e) {
                assertEquals(IwppNative.EDEVICE, e.getStatus());
                assertTrue(e.getMessage().length() > 5);
            }
        }
        /* after all that, the same thread still computes correctly */
        byte[][] out = new byte[1][20];
        IwppNative.fillHoles(IwppNative.BACKEND_CPU, 0, 0, new Object[] { a }, 5, 4, 4, out);
        assertArrayEquals(a, out[0]);
    }

    /* ------------------------------------------------------- threads */

    @Test
    public void eightThreadsAtOnce() throws Exception {
        eightThreads();
    }

    /**
     * 8 new threads (so 8 new native contexts) calling at once, CPU and the
     * other usable backends interleaved, each checked against the reference.
     * Also run 50 times in one JVM by EightThreadsLoopTest.
     */
    static void eightThreads() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<String>> results = new ArrayList<Future<String>>();
            for (int t = 0; t < 8; t++) {
                final int id = t;
                results.add(pool.submit(new Callable<String>() {
                    public String call() {
                        Random r = new Random(100 + id);
                        int type = TYPES[id % 3];
                        int w = 40 + id, h = 31, d = id % 2 == 0 ? 1 : 3;
                        int conn = d == 1 ? (id % 4 == 0 ? 4 : 8) : 26;
                        int backend = backends.get(id % backends.size());
                        for (int rep = 0; rep < 5; rep++) {
                            int n = w * h * d;
                            double[] mask = random(r, n, type, 12);
                            double[] marker = new double[n];
                            for (int k = 0; k < 3; k++)
                                marker[r.nextInt(n)] = mask[r.nextInt(n)];
                            Object[] mk = toSlices(marker, type, w, h, d);
                            IwppNative.reconstruct(backend, 0, id % 2 + 1, mk, toSlices(mask, type, w, h, d), w, h, conn,
                                    IwppNative.BY_DILATION);
                            double[] want = Reference.reconstruct(marker, mask, w, h, d, conn, true);
                            double[] got = fromSlices(mk);
                            for (int i = 0; i < n; i++)
                                if (want[i] != got[i])
                                    return "thread " + id + " rep " + rep + " differs at " + i;
                            double[] st = IwppNative.lastStats();
                            if (st == null || (int) st[IwppNative.STAT_BACKEND] != backend)
                                return "thread " + id + ": stats of another thread or backend";
                        }
                        return null;
                    }
                }));
            }
            for (Future<String> f : results)
                assertNull(f.get());
        } finally {
            pool.shutdownNow();
        }
    }

    /* ------------------------------------------------- thread counts */

    @Test
    public void threadCountsAreBounded() throws Exception {
        assertEquals("Java and C maxima agree", IwppNative.MAX_THREADS, IwppNative.maxThreads());
        final byte[] in = new byte[20];
        in[7] = 5;
        final byte[][] out = new byte[1][20];
        java.util.Arrays.fill(out[0], (byte) 77);
        final float[][] dist = new float[1][20];
        java.util.Arrays.fill(dist[0], 77f);
        final byte[] marker = new byte[20];
        java.util.Arrays.fill(marker, (byte) 77);
        int[] bad = { -1, -1000, Integer.MIN_VALUE, IwppNative.MAX_THREADS + 1, 100000, Integer.MAX_VALUE };
        for (final int t : bad) {
            String m = "threads " + t;
            for (int backend = IwppNative.BACKEND_AUTO; backend <= IwppNative.BACKEND_OPENCL; backend++) {
                final int bk = backend;
                expectMentions("threads", m, new Call() {
                    public void run() {
                        IwppNative.fillHoles(bk, 0, t, new Object[] { in }, 5, 4, 4, out);
                    }
                });
            }
            expectMentions("threads", m, new Call() {
                public void run() {
                    IwppNative.reconstruct(IwppNative.BACKEND_CPU, 0, t, new Object[] { marker },
                            new Object[] { in }, 5, 4, 8, 0);
                }
            });
            expectMentions("threads", m, new Call() {
                public void run() {
                    IwppNative.distanceTransform(IwppNative.BACKEND_CPU, 0, t, new Object[] { in }, 5, 4,
                            IwppNative.EDT_EXACT, 1, 1, 1, dist, null);
                }
            });
            expectMentions("threads", m, new Call() {
                public void run() {
                    IwppNative.hMaxima(IwppNative.BACKEND_CPU, 0, t, new Object[] { in }, 5, 4, 1, 8, out);
                }
            });
        }
        for (int i = 0; i < 20; i++) {
            assertEquals("fill holes output untouched", 77, out[0][i]);
            assertEquals("EDT output untouched", 77f, dist[0][i], 0f);
            assertEquals("marker untouched", 77, marker[i]);
        }
        /* the bounds themselves are accepted */
        for (int t : new int[] { 0, 1, IwppNative.MAX_THREADS }) {
            IwppNative.fillHoles(IwppNative.BACKEND_CPU, 0, t, new Object[] { in }, 5, 4, 4, out);
            assertArrayEquals("threads " + t, in, out[0]);
        }
    }

    @Test
    public void pluginClampsTheSavedThreadCount() throws Exception {
        /* IwppRun.prefThreads is package-private in iwpp.plugin: reach it by reflection */
        java.lang.reflect.Method pref = Class.forName("iwpp.plugin.IwppRun").getDeclaredMethod("prefThreads");
        pref.setAccessible(true);
        String key = "iwpp.threads";
        String old = ij.Prefs.get(key, (String) null);
        try {
            String[][] cases = { { "100000", String.valueOf(IwppNative.MAX_THREADS) }, { "1025", "1024" },
                    { "1024", "1024" }, { "3", "3" }, { "0", "0" }, { "-5", "0" }, { "NaN", "0" },
                    { "1e300", "1024" }, { "junk", "0" } };
            for (String[] cs : cases) {
                ij.Prefs.set(key, cs[0]);
                assertEquals("saved threads " + cs[0], Integer.parseInt(cs[1]), ((Integer) pref.invoke(null)).intValue());
            }
        } finally {
            ij.Prefs.set(key, old);
        }
    }

    /** Like expect(IAE, ...), and the message names @p word. */
    static void expectMentions(String word, String what, Call c) {
        try {
            c.run();
            fail(what + ": no exception");
        } catch (IllegalArgumentException e) {
            assertTrue(what + ": message " + e.getMessage(), e.getMessage() != null && e.getMessage().contains(word));
        }
    }

    /* ------------------------------------------ null and wrong slices */

    @Test
    public void nullOrWrongSliceAnywhereIsRefusedBeforeAnythingRuns() {
        final int w = 5, h = 4, p = w * h;
        final byte[][] marker = { filled(p, 1), filled(p, 2), filled(p, 3) };
        final byte[][] mask = { filled(p, 9), filled(p, 9), filled(p, 9) };
        final byte[][] out = { filled(p, 77), filled(p, 77), filled(p, 77) };
        final float[][] dist = { new float[p], new float[p], new float[p] };
        final long[][] near = { new long[p], new long[p], new long[p] };
        for (float[] f : dist)
            java.util.Arrays.fill(f, 77f);
        for (long[] l : near)
            java.util.Arrays.fill(l, 77L);
        for (int backend : backends) {
            final int bk = backend;
            for (int z = 0; z < 3; z++) {
                final int zz = z;
                String where = IwppNative.backendName(bk) + " slice " + (z + 1);
                /* a null slice in each argument, at each position */
                expectMentions("null", where + " marker", new Call() {
                    public void run() {
                        IwppNative.reconstruct(bk, 0, 0, with(marker, zz, null), mask, w, h, 26, 0);
                    }
                });
                expectMentions("null", where + " mask", new Call() {
                    public void run() {
                        IwppNative.reconstruct(bk, 0, 0, marker, with(mask, zz, null), w, h, 26, 0);
                    }
                });
                expectMentions("null", where + " in", new Call() {
                    public void run() {
                        IwppNative.fillHoles(bk, 0, 0, with(mask, zz, null), w, h, 6, out);
                    }
                });
                expectMentions("null", where + " out", new Call() {
                    public void run() {
                        IwppNative.fillHoles(bk, 0, 0, mask, w, h, 6, with(out, zz, null));
                    }
                });
                expectMentions("null", where + " regional maxima out", new Call() {
                    public void run() {
                        byte[][] o = out.clone();
                        o[zz] = null;
                        IwppNative.regionalMaxima(bk, 0, 0, mask, w, h, 6, o);
                    }
                });
                expectMentions("null", where + " dist", new Call() {
                    public void run() {
                        float[][] d = dist.clone();
                        d[zz] = null;
                        IwppNative.distanceTransform(bk, 0, 0, mask, w, h, 0, 1, 1, 1, d, near);
                    }
                });
                expectMentions("null", where + " nearest", new Call() {
                    public void run() {
                        long[][] n = near.clone();
                        n[zz] = null;
                        IwppNative.distanceTransform(bk, 0, 0, mask, w, h, 0, 1, 1, 1, dist, n);
                    }
                });
                /* a wrong type or length in each argument, at each position */
                expectMentions("slice " + (z + 1), where + " short marker slice", new Call() {
                    public void run() {
                        IwppNative.reconstruct(bk, 0, 0, with(marker, zz, new short[p]), mask, w, h, 26, 0);
                    }
                });
                expectMentions("slice " + (z + 1), where + " float mask slice", new Call() {
                    public void run() {
                        IwppNative.reconstruct(bk, 0, 0, marker, with(mask, zz, new float[p]), w, h, 26, 0);
                    }
                });
                expectMentions("slice " + (z + 1), where + " short out slice", new Call() {
                    public void run() {
                        IwppNative.fillHoles(bk, 0, 0, mask, w, h, 6, with(out, zz, new short[p]));
                    }
                });
                expectMentions("slice " + (z + 1), where + " long out slice", new Call() {
                    public void run() {
                        IwppNative.killBorders(bk, 0, 0, mask, w, h, 6, with(out, zz, new long[p]));
                    }
                });
                expectMentions("slice " + (z + 1), where + " short in slice", new Call() {
                    public void run() {
                        IwppNative.killBorders(bk, 0, 0, with(mask, zz, new byte[p + 1]), w, h, 6, out);
                    }
                });
                expectMentions("slice " + (z + 1), where + " short dist slice", new Call() {
                    public void run() {
                        float[][] d = dist.clone();
                        d[zz] = new float[p - 1];
                        IwppNative.distanceTransform(bk, 0, 0, mask, w, h, 0, 1, 1, 1, d, near);
                    }
                });
                expectMentions("slice " + (z + 1), where + " long nearest slice", new Call() {
                    public void run() {
                        long[][] n = near.clone();
                        n[zz] = new long[p + 3];
                        IwppNative.distanceTransform(bk, 0, 0, mask, w, h, 0, 1, 1, 1, dist, n);
                    }
                });
                expectMentions("slices", where + " too many out slices", new Call() {
                    public void run() {
                        IwppNative.hMinima(bk, 0, 0, mask, w, h, 1, 6, new Object[] { out[0], out[1], out[2], out[0] });
                    }
                });
            }
        }
        for (int z = 0; z < 3; z++)
            for (int i = 0; i < p; i++) {
                assertEquals("marker untouched", z + 1, marker[z][i]);
                assertEquals("out untouched", 77, out[z][i]);
                assertEquals("dist untouched", 77f, dist[z][i], 0f);
                assertEquals("nearest untouched", 77L, near[z][i]);
            }
    }

    static byte[] filled(int n, int v) {
        byte[] b = new byte[n];
        java.util.Arrays.fill(b, (byte) v);
        return b;
    }

    /** A copy of @p slices (as Object[], so any type fits) with slice @p z replaced. */
    static Object[] with(Object[] slices, int z, Object slice) {
        Object[] c = new Object[slices.length];
        System.arraycopy(slices, 0, c, 0, slices.length);
        c[z] = slice;
        return c;
    }
}
