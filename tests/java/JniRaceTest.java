/*
 * JniRaceTest.java - other Java threads replace the slices of the Object[]
 * arguments (with arrays of another type or length, or null) while a call is
 * running. The glue must check and use one fixed set of arrays: every call
 * either succeeds, having written exactly the arrays of a valid snapshot, or
 * throws IllegalArgumentException having written nothing; the JVM must not
 * crash. ctest runs it under -Xcheck:jni (java_jni_race) and fails on any JNI
 * warning, e.g. "Array element type mismatch" from writing a float[] region
 * into what has become a byte[].
 */
package iwpp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.Test;

public class JniRaceTest {
    static final int W = 96, H = 80, D = 2, P = W * H;
    /** Minimum rounds per operation, and the time after which no more are started once that is reached. */
    static final int MIN_ROUNDS = Integer.getInteger("iwpp.race.rounds", 150);
    static final long RUN_MS = Long.getLong("iwpp.race.ms", 4000);

    /** One Object[] argument: the array the call gets, and per slice the arrays that may sit there. */
    static final class Slots {
        final Object[] arr;
        final Object[][] choices; // choices[z][0] is put there first and most often

        Slots(Object[] arr, Object[][] choices) {
            this.arr = arr;
            this.choices = choices;
            for (int z = 0; z < arr.length; z++)
                arr[z] = choices[z][0];
        }
    }

    /** An operation raced on: fresh arrays each round, one native call, then a check of every array. */
    abstract static class Op {
        final String name;
        Slots[] slots;
        int ok, refused;

        Op(String name) {
            this.name = name;
        }

        abstract void setup(int round);

        abstract void call();

        /** null if every array holds what a call that succeeded (or not) may leave there. */
        abstract String verify(boolean succeeded);
    }

    static volatile Op current; // the op of the round under way, or null between rounds
    static volatile boolean stop;
    static final AtomicInteger swaps = new AtomicInteger();

    /* ------------------------------------------------------- helpers */

    static byte[] bytes(double[] v, int z) {
        byte[] b = new byte[P];
        for (int i = 0; i < P; i++)
            b[i] = (byte) (int) v[z * P + i];
        return b;
    }

    static short[] shorts(double[] v, int z) {
        short[] b = new short[P];
        for (int i = 0; i < P; i++)
            b[i] = (short) (int) v[z * P + i];
        return b;
    }

    static float[] floats(double[] v, int z) {
        float[] b = new float[P];
        for (int i = 0; i < P; i++)
            b[i] = (float) v[z * P + i];
        return b;
    }

    /** Slice z of an array of any pixel type equals v (unsigned bytes and shorts). */
    static boolean equal(Object a, double[] v, int z) {
        int n = a instanceof byte[] ? ((byte[]) a).length : a instanceof short[] ? ((short[]) a).length
                : a instanceof float[] ? ((float[]) a).length : ((long[]) a).length;
        if (n != P)
            return false;
        for (int i = 0; i < P; i++) {
            double x = a instanceof byte[] ? ((byte[]) a)[i] & 0xff
                    : a instanceof short[] ? ((short[]) a)[i] & 0xffff
                            : a instanceof float[] ? ((float[]) a)[i] : ((long[]) a)[i];
            if (x != v[z * P + i])
                return false;
        }
        return true;
    }

    static boolean allEqual(Object[] arrays, double[] v) {
        for (int z = 0; z < arrays.length; z++)
            if (!equal(arrays[z], v, z))
                return false;
        return true;
    }

    static double[] constant(int n, double c) {
        double[] v = new double[n];
        Arrays.fill(v, c);
        return v;
    }

    static boolean untouched(Object[] arrays, double c) {
        for (Object a : arrays) {
            int n = a instanceof byte[] ? ((byte[]) a).length : a instanceof short[] ? ((short[]) a).length
                    : a instanceof float[] ? ((float[]) a).length : ((long[]) a).length;
            for (int i = 0; i < n; i++) {
                double x = a instanceof byte[] ? ((byte[]) a)[i] & 0xff
                        : a instanceof short[] ? ((short[]) a)[i] & 0xffff
                                : a instanceof float[] ? ((float[]) a)[i] : ((long[]) a)[i];
                if (x != c)
                    return false;
            }
        }
        return true;
    }

    static Object[][] pair(Object[] first, Object[] second) {
        Object[][] c = new Object[D][];
        for (int z = 0; z < D; z++)
            c[z] = new Object[] { first[z], second[z] };
        return c;
    }

    static Object[][] triple(Object[] a, Object[] b, Object[] c) {
        Object[][] r = new Object[D][];
        for (int z = 0; z < D; z++)
            r[z] = new Object[] { a[z], b[z], c[z] };
        return r;
    }

    /* ---------------------------------------------------- operations */

    /** Reconstruction in place: marker and mask slices swap between float[], byte[] and null. */
    static final class Reconstruct extends Op {
        final double[] marker, mask, result;
        Object[] f, b, mf, mb;

        Reconstruct() {
            super("reconstruct");
            Random r = new Random(7);
            mask = new double[P * D];
            for (int i = 0; i < mask.length; i++)
                mask[i] = 1 + r.nextInt(200);
            marker = new double[P * D];
            for (int k = 0; k < 4; k++)
                marker[r.nextInt(P)] = 255; // seeds in slice 1 only, clipped by the mask
            for (int i = 0; i < marker.length; i++)
                marker[i] = Math.min(marker[i], mask[i]);
            result = Reference.reconstruct(marker, mask, W, H, D, 26, true);
            for (int z = 0; z < D; z++)
                assertTrue("the result differs from the marker in slice " + (z + 1), !equalSlices(marker, result, z));
        }

        void setup(int round) {
            f = new Object[D];
            b = new Object[D];
            mf = new Object[D];
            mb = new Object[D];
            for (int z = 0; z < D; z++) {
                f[z] = floats(marker, z);
                b[z] = bytes(marker, z);
                mf[z] = floats(mask, z);
                mb[z] = bytes(mask, z);
            }
            boolean floatFirst = round % 2 == 0;
            slots = new Slots[] { new Slots(new Object[D], floatFirst ? pair(f, b) : pair(b, f)),
                    new Slots(new Object[D], floatFirst ? pair(mf, mb) : pair(mb, mf)) };
        }

        void call() {
            IwppNative.reconstruct(IwppNative.BACKEND_CPU, 0, 1, slots[0].arr, slots[1].arr, W, H, 26,
                    IwppNative.BY_DILATION);
        }

        String verify(boolean succeeded) {
            if (!allEqual(mf, mask) || !allEqual(mb, mask))
                return "a mask slice was written";
            boolean fRes = allEqual(f, result), fInit = allEqual(f, marker);
            boolean bRes = allEqual(b, result), bInit = allEqual(b, marker);
            if (succeeded ? (fRes && bInit) || (bRes && fInit) : fInit && bInit)
                return null;
            return (succeeded ? "succeeded" : "refused") + " but float slices: result " + fRes + ", marker " + fInit
                    + "; byte slices: result " + bRes + ", marker " + bInit;
        }
    }

    static boolean equalSlices(double[] a, double[] b, int z) {
        for (int i = z * P; i < (z + 1) * P; i++)
            if (a[i] != b[i])
                return false;
        return true;
    }

    /** Fill holes into out: in swaps byte[]/short[], out swaps byte[]/short[]/too long byte[]/null. */
    static final class FillHoles extends Op {
        final double[] in, result;
        Object[] ib, is, ob, os, ol;

        FillHoles() {
            super("fillHoles");
            Random r = new Random(8);
            in = new double[P * D];
            for (int i = 0; i < in.length; i++)
                in[i] = r.nextInt(10);
            result = Reference.fillHoles(in, W, H, D, 6, 255);
        }

        void setup(int round) {
            ib = new Object[D];
            is = new Object[D];
            ob = new Object[D];
            os = new Object[D];
            ol = new Object[D];
            for (int z = 0; z < D; z++) {
                ib[z] = bytes(in, z);
                is[z] = shorts(in, z);
                byte[] o = new byte[P];
                Arrays.fill(o, (byte) 77);
                ob[z] = o;
                short[] s = new short[P];
                Arrays.fill(s, (short) 77);
                os[z] = s;
                byte[] l = new byte[P + 1];
                Arrays.fill(l, (byte) 77);
                ol[z] = l;
            }
            boolean bytesFirst = round % 2 == 0;
            slots = new Slots[] { new Slots(new Object[D], bytesFirst ? pair(ib, is) : pair(is, ib)),
                    new Slots(new Object[D], bytesFirst ? triple(ob, os, ol) : triple(os, ob, ol)) };
        }

        void call() {
            IwppNative.fillHoles(IwppNative.BACKEND_CPU, 0, 1, slots[0].arr, W, H, 6, slots[1].arr);
        }

        String verify(boolean succeeded) {
            if (!allEqual(ib, in) || !allEqual(is, in))
                return "an input slice was written";
            if (!untouched(ol, 77))
                return "a slice of the wrong length was written";
            boolean bRes = allEqual(ob, result), bUntouched = untouched(ob, 77);
            boolean sRes = allEqual(os, result), sUntouched = untouched(os, 77);
            if (succeeded ? (bRes && sUntouched) || (sRes && bUntouched) : bUntouched && sUntouched)
                return null;
            return (succeeded ? "succeeded" : "refused") + " but byte out: result " + bRes + ", untouched "
                    + bUntouched + "; short out: result " + sRes + ", untouched " + sUntouched;
        }
    }

    /** EDT: binary swaps byte[]/float[], dist float[]/shorter float[], nearest long[]/longer long[], all to null. */
    static final class Distance extends Op {
        final double[] bin, dist, near;
        Object[] bb, bf, df, ds, nl, ns;

        Distance() {
            super("distanceTransform");
            Random r = new Random(9);
            bin = new double[P * D];
            for (int i = 0; i < bin.length; i++)
                bin[i] = r.nextInt(50) == 0 ? 0 : 1;
            /* the expected output: one undisturbed call */
            float[][] d = new float[D][P];
            long[][] n = new long[D][P];
            Object[] in = new Object[D];
            for (int z = 0; z < D; z++)
                in[z] = bytes(bin, z);
            IwppNative.distanceTransform(IwppNative.BACKEND_CPU, 0, 1, in, W, H, IwppNative.EDT_EXACT, 1, 1, 1, d, n);
            dist = new double[P * D];
            near = new double[P * D];
            for (int z = 0; z < D; z++)
                for (int i = 0; i < P; i++) {
                    dist[z * P + i] = d[z][i];
                    near[z * P + i] = n[z][i];
                }
        }

        void setup(int round) {
            bb = new Object[D];
            bf = new Object[D];
            df = new Object[D];
            ds = new Object[D];
            nl = new Object[D];
            ns = new Object[D];
            for (int z = 0; z < D; z++) {
                bb[z] = bytes(bin, z);
                bf[z] = floats(bin, z);
                float[] a = new float[P];
                Arrays.fill(a, 77f);
                df[z] = a;
                float[] b = new float[P - 1];
                Arrays.fill(b, 77f);
                ds[z] = b;
                long[] c = new long[P];
                Arrays.fill(c, 77L);
                nl[z] = c;
                long[] e = new long[P + 1];
                Arrays.fill(e, 77L);
                ns[z] = e;
            }
            boolean bytesFirst = round % 2 == 0;
            slots = new Slots[] { new Slots(new Object[D], bytesFirst ? pair(bb, bf) : pair(bf, bb)),
                    new Slots(new float[D][], pair(df, ds)), new Slots(new long[D][], pair(nl, ns)) };
        }

        void call() {
            IwppNative.distanceTransform(IwppNative.BACKEND_CPU, 0, 1, slots[0].arr, W, H, IwppNative.EDT_EXACT, 1, 1,
                    1, (float[][]) slots[1].arr, (long[][]) slots[2].arr);
        }

        String verify(boolean succeeded) {
            if (!allEqual(bb, bin) || !allEqual(bf, bin))
                return "an input slice was written";
            if (!untouched(ds, 77) || !untouched(ns, 77))
                return "a slice of the wrong length was written";
            boolean dRes = allEqual(df, dist), dUntouched = untouched(df, 77);
            boolean nRes = allEqual(nl, near), nUntouched = untouched(nl, 77);
            if (succeeded ? dRes && nRes : dUntouched && nUntouched)
                return null;
            return (succeeded ? "succeeded" : "refused") + " but dist: result " + dRes + ", untouched " + dUntouched
                    + "; nearest: result " + nRes + ", untouched " + nUntouched;
        }
    }

    /** Replaces random slices of the current op's arguments until stopped. */
    static final class Swapper extends Thread {
        final Random r;
        volatile Throwable error;

        Swapper(long seed) {
            r = new Random(seed);
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (!stop) {
                    Op op = current;
                    if (op == null) {
                        Thread.yield();
                        continue;
                    }
                    Slots s = op.slots[r.nextInt(op.slots.length)];
                    int z = r.nextInt(D);
                    int x = r.nextInt(10);
                    Object[] c = s.choices[z];
                    /* mostly the first choice, so that some snapshots are valid */
                    s.arr[z] = x == 0 ? null : x <= 2 ? c[1 + r.nextInt(c.length - 1)] : c[0];
                    swaps.incrementAndGet();
                }
            } catch (Throwable t) {
                error = t;
            }
        }
    }

    @Test
    public void slicesSwappedDuringCallsAreNeverOverrun() throws Exception {
        IwppNative.requireLoaded();
        Op[] ops = { new Reconstruct(), new FillHoles(), new Distance() };
        List<Swapper> swappers = new ArrayList<Swapper>();
        stop = false;
        for (int i = 0; i < 2; i++) {
            Swapper s = new Swapper(1000 + i);
            swappers.add(s);
            s.start();
        }
        Random r = new Random(11);
        long t0 = System.nanoTime();
        int rounds = 0;
        List<String> errors = new ArrayList<String>();
        try {
            while (errors.size() < 5 && (rounds < 3 * MIN_ROUNDS || (System.nanoTime() - t0) / 1000000 < RUN_MS)) {
                Op op = ops[rounds % ops.length];
                op.setup(rounds / ops.length);
                swaps.set(0);
                current = op;
                /* a random number of swaps before the call too (counted, not timed: CI machines are busy) */
                int k = r.nextInt(40);
                long until = System.nanoTime() + 1000000000L;
                while (swaps.get() < k && System.nanoTime() < until)
                    Thread.yield();
                boolean succeeded;
                try {
                    op.call();
                    succeeded = true;
                    op.ok++;
                } catch (IllegalArgumentException e) {
                    succeeded = false;
                    op.refused++;
                }
                current = null;
                String bad = op.verify(succeeded);
                if (bad != null)
                    errors.add(op.name + " round " + rounds + ": " + bad);
                rounds++;
            }
        } finally {
            stop = true;
            current = null;
            for (Swapper s : swappers)
                s.join(10000);
        }
        StringBuilder sum = new StringBuilder();
        for (Op op : ops)
            sum.append(' ').append(op.name).append(" ok ").append(op.ok).append(" refused ").append(op.refused).append(';');
        System.out.printf("JniRaceTest: %d calls in %.1f s:%s%n", rounds, (System.nanoTime() - t0) / 1e9, sum);
        for (Swapper s : swappers)
            assertNull("swapper failed", s.error);
        assertEquals(errors.toString(), 0, errors.size());
        for (Op op : ops)
            assertTrue(op.name + ": both outcomes seen (" + op.ok + " ok, " + op.refused + " refused)",
                    op.ok > 0 && op.refused > 0);
    }
}
