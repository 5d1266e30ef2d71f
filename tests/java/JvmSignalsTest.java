/*
 * JvmSignalsTest.java - Java's own semantics must survive the native library.
 *
 * Runs in a fresh JVM per ctest entry (java_signals_*), because what matters
 * is the first call of each backend: an OpenCL runtime (PoCL's LLVM) installs
 * process-wide SIGFPE/SIGSEGV/... handlers over the JVM's, after which 7/0 no
 * longer throws and implicit null checks or stack banging can kill the JVM.
 * -Diwpp.test.order=auto,cpu,opencl gives the order of the first calls; after
 * each one, integer division by zero, null dereferences, out-of-bounds indexes
 * and stack overflow must still throw their Java exceptions, in interpreted
 * and in JIT-compiled code (each phase runs a fresh copy of the checks, from
 * the interpreter until the JIT has compiled them).
 * An unavailable backend is reported and skipped (the call that found it
 * unavailable still counts: it may have loaded a runtime).
 */
package iwpp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.util.concurrent.Callable;

import org.junit.Test;

public class JvmSignalsTest {

    /**
     * The checks. Each phase loads a fresh copy of this class (see fresh()):
     * the JIT soon replaces a trapping division or null check by an explicit
     * test, so code that has already run would stop exercising the signal
     * handlers. A fresh copy starts in the interpreter, then gets compiled.
     */
    public static final class Probe implements Callable<String> {
        /* not final: javac must not fold 7 / zeroField into a constant */
        static int zeroField = 0;
        static int[] nullArray = null;

        static int zero() {
            return zeroField;
        }

        static int divide(int a, int b) {
            return a / b;
        }

        static long remainder(long a, long b) {
            return a % b;
        }

        static int lengthOf(int[] a) {
            return a.length;
        }

        static int at(int[] a, int i) {
            return a[i];
        }

        static int depth(int n) {
            return n == Integer.MIN_VALUE ? n : depth(n + 1) + 1;
        }

        /** Enough repetitions for C1 and C2 to compile the little methods above. */
        static final int REPS = 30000;

        public Probe() {
        }

        /** null if Java's exceptions all came, else what went wrong. */
        public String call() {
            for (int i = 0; i < REPS; i++) {
                int a = 7, b = zero();
                try {
                    return "7 / 0 returned " + (a / b) + " instead of throwing ArithmeticException (try " + i + ")";
                } catch (ArithmeticException expected) {
                }
                try {
                    return "divide(7, 0) returned " + divide(a, b) + " (try " + i + ")";
                } catch (ArithmeticException expected) {
                }
                try {
                    return "7L % 0 returned " + remainder(7L, b) + " (try " + i + ")";
                } catch (ArithmeticException expected) {
                }
                try {
                    return "null.length returned " + lengthOf(nullArray) + " (try " + i + ")";
                } catch (NullPointerException expected) {
                }
                try {
                    return "new int[3][3] returned " + at(new int[3], 3 + b) + " (try " + i + ")";
                } catch (ArrayIndexOutOfBoundsException expected) {
                }
            }
            if (divide(7, 2) != 3)
                return "7 / 2 is not 3";
            for (int i = 0; i < 3; i++) {
                try {
                    return "unbounded recursion returned " + depth(0);
                } catch (StackOverflowError expected) {
                }
            }
            return null;
        }
    }

    /** A new, never-run copy of Probe, from a class loader of its own. */
    @SuppressWarnings("unchecked")
    static Callable<String> fresh() throws Exception {
        final String name = Probe.class.getName();
        InputStream in = JvmSignalsTest.class.getResourceAsStream("/" + name.replace('.', '/') + ".class");
        assertNotNull("Probe's class file", in);
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        try {
            byte[] chunk = new byte[8192];
            for (int n; (n = in.read(chunk)) > 0;)
                buf.write(chunk, 0, n);
        } finally {
            in.close();
        }
        final byte[] bytes = buf.toByteArray();
        ClassLoader loader = new ClassLoader(JvmSignalsTest.class.getClassLoader()) {
            @Override
            protected Class<?> loadClass(String n, boolean resolve) throws ClassNotFoundException {
                if (!n.equals(name))
                    return super.loadClass(n, resolve);
                synchronized (getClassLoadingLock(n)) {
                    Class<?> c = findLoadedClass(n);
                    return c != null ? c : defineClass(n, bytes, 0, bytes.length);
                }
            }
        };
        return (Callable<String>) loader.loadClass(name).getConstructor().newInstance();
    }

    static void javaSemanticsHold(String when) throws Exception {
        Callable<String> probe = fresh();
        String broken = probe.call();
        assertNull(when + ": " + broken, broken);
    }

    /** A small reconstruction on @p backend; false if the backend is not available. */
    static boolean firstCall(int backend) {
        int w = 9, h = 7;
        byte[] mask = new byte[w * h];
        byte[] marker = new byte[w * h];
        java.util.Arrays.fill(mask, (byte) 5);
        marker[10] = 5;
        try {
            IwppNative.reconstruct(backend, 0, 0, new Object[] { marker }, new Object[] { mask }, w, h, 8,
                    IwppNative.BY_DILATION);
        } catch (IwppException e) {
            if (e.getStatus() != IwppNative.EDEVICE)
                throw e;
            System.out.println("JvmSignalsTest: " + IwppNative.backendName(backend) + " not available: "
                    + e.getMessage());
            return false;
        }
        for (int i = 0; i < w * h; i++)
            assertEquals(IwppNative.backendName(backend) + " result at " + i, 5, marker[i]);
        return true;
    }

    @Test
    public void javaSemanticsSurviveEachBackendsFirstCall() throws Exception {
        IwppNative.requireLoaded();
        javaSemanticsHold("before any native call");
        String order = System.getProperty("iwpp.test.order", "auto,cpu,opencl");
        StringBuilder ran = new StringBuilder();
        for (String name : order.split(",")) {
            int backend = IwppNative.backendFromName(name);
            if (backend < 0)
                throw new IllegalArgumentException("iwpp.test.order: unknown backend " + name);
            boolean available = firstCall(backend);
            javaSemanticsHold("after the first " + name + " call" + (available ? "" : " (unavailable)"));
            ran.append(' ').append(name).append(available ? "" : "(unavailable)");
        }
        System.out.println("JvmSignalsTest: Java semantics intact after the first calls of" + ran);
    }
}
