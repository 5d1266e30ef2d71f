/*
 * ProgressTest.java - progress and cancel of calls that run in memory (no
 * tiles), on the CPU and on OpenCL when it is there: every operation reports
 * fractions in [0, 1] that never go back and end at 1; an opening of radius 40
 * reports its erosion rounds; a listener that answers true at its k-th report
 * cancels the call (IwppCancelledException), and then the output arrays and
 * the marker are exactly as they were. Cancels come from the listener only
 * (no timing).
 */
package iwpp;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.List;

import org.junit.BeforeClass;
import org.junit.Test;

public class ProgressTest {
    static final int W = 96, H = 64, D = 3;

    @BeforeClass
    public static void load() {
        IwppNative.requireLoaded();
    }

    /** Records every fraction; answers true (cancel) at report number @p cancelAt (1-based; 0 = never). */
    static final class Recorder implements IwppNative.Progress {
        final List<Double> seen = new ArrayList<Double>();
        final int cancelAt;

        Recorder(int cancelAt) {
            this.cancelAt = cancelAt;
        }

        @Override
        public boolean update(double fraction) {
            seen.add(fraction);
            return seen.size() == cancelAt;
        }
    }

    static byte[][] texture(int depth, int seed) {
        byte[][] s = new byte[depth][W * H];
        long r = seed;
        for (int z = 0; z < depth; z++)
            for (int i = 0; i < W * H; i++) {
                r = r * 6364136223846793005L + 1442695040888963407L;
                int x = i % W, y = i / W;
                s[z][i] = (byte) ((((x / 7 + y / 5 + z) & 3) * 50 + (int) ((r >>> 59) & 15)) & 0xff);
            }
        return s;
    }

    static byte[][] filled(int depth, byte v) {
        byte[][] s = new byte[depth][W * H];
        for (byte[] p : s)
            java.util.Arrays.fill(p, v);
        return s;
    }

    /** The output (the marker for op 0) of operation @p op, filled with 77 (the marker: its own texture). */
    static Object[] output(int op, int depth) {
        if (op == 0)
            return texture(depth, 9);
        if (op == 1) {
            float[][] d = new float[depth][W * H];
            for (float[] f : d)
                java.util.Arrays.fill(f, 77f);
            return d;
        }
        return filled(depth, (byte) 77);
    }

    /** Runs operation @p op (0..9) on a texture into @p out, with listener @p p. */
    static void run(int op, int backend, int depth, IwppNative.Progress p, Object[] out) {
        byte[][] in = texture(depth, 7);
        int conn = depth > 1 ? 26 : 8;
        switch (op) {
        case 0: IwppNative.reconstruct(backend, 0, 0, 0L, null, p, out, in, W, H, conn, IwppNative.BY_DILATION); break;
        case 1:
            IwppNative.distanceTransform(backend, 0, 0, 0L, null, p, in, W, H, IwppNative.EDT_EXACT, 1, 1, 1,
                    (float[][]) out, null);
            break;
        case 2: IwppNative.fillHoles(backend, 0, 0, 0L, null, p, in, W, H, conn, out); break;
        case 3: IwppNative.killBorders(backend, 0, 0, 0L, null, p, in, W, H, conn, out); break;
        case 4: IwppNative.regionalMaxima(backend, 0, 0, 0L, null, p, in, W, H, conn, (byte[][]) out); break;
        case 5: IwppNative.regionalMinima(backend, 0, 0, 0L, null, p, in, W, H, conn, (byte[][]) out); break;
        case 6: IwppNative.hMaxima(backend, 0, 0, 0L, null, p, in, W, H, 20, conn, out); break;
        case 7: IwppNative.hMinima(backend, 0, 0, 0L, null, p, in, W, H, 20, conn, out); break;
        case 8: IwppNative.openingByReconstruction(backend, 0, 0, 0L, null, p, in, W, H, 40, conn, out); break;
        default: IwppNative.closingByReconstruction(backend, 0, 0, 0L, null, p, in, W, H, 3, conn, out); break;
        }
        assertArrayEquals("the input is untouched", texture(depth, 7), in);
    }

    static List<Integer> backends() {
        List<Integer> b = new ArrayList<Integer>();
        b.add(IwppNative.BACKEND_CPU);
        if (IwppNative.backendUnavailableReason(IwppNative.BACKEND_OPENCL) == null)
            b.add(IwppNative.BACKEND_OPENCL);
        return b;
    }

    @Test
    public void inMemoryCallsReportProgress() {
        for (int backend : backends())
            for (int depth = 1; depth <= D; depth += D - 1)
                for (int op = 0; op < 10; op++) {
                    String what = "op " + op + " on " + IwppNative.backendName(backend) + ", depth " + depth;
                    Recorder r = new Recorder(0);
                    run(op, backend, depth, r, output(op, depth));
                    assertTrue(what + ": at least a start and an end: " + r.seen, r.seen.size() >= 2);
                    double last = -1;
                    for (double f : r.seen) {
                        assertTrue(what + ": fraction " + f + " out of [0, 1]", f >= 0 && f <= 1);
                        assertTrue(what + ": fractions went back: " + r.seen, f >= last);
                        last = f;
                    }
                    assertEquals(what + ": ends at 1", 1.0, last, 0.0);
                    if (op == 8) // radius 40: the erosion goes in rounds, each reported
                        assertTrue(what + ": erosion rounds reported: " + r.seen, r.seen.size() >= 8);
                }
    }

    @Test
    public void listenerCancelsAndNothingIsWritten() {
        for (int backend : backends())
            for (int op = 0; op < 10; op++) {
                Recorder count = new Recorder(0);
                run(op, backend, D, count, output(op, D));
                /* every report but the last (a finished call is not cancelled) can cancel */
                for (int k = 1; k < count.seen.size(); k++) {
                    String what = "op " + op + " on " + IwppNative.backendName(backend) + ", cancel at report " + k;
                    Recorder r = new Recorder(k);
                    Object[] out = output(op, D);
                    try {
                        run(op, backend, D, r, out);
                        fail(what + ": not cancelled");
                    } catch (IwppCancelledException e) {
                        assertEquals(what + ": no report after the cancel", k, r.seen.size());
                    }
                    Object[] fresh = output(op, D);
                    for (int z = 0; z < D; z++) {
                        if (op == 1)
                            assertArrayEquals(what + ": distances untouched", (float[]) fresh[z], (float[]) out[z], 0f);
                        else
                            assertArrayEquals(what + ": output untouched", (byte[]) fresh[z], (byte[]) out[z]);
                    }
                }
            }
    }
}
