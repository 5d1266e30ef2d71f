/*
 * EightThreadsLoopTest.java - IwppNativeTest.eightThreads() 50 times in one
 * JVM (-Diwpp.test.loops=N to change): every round starts 8 new threads, so
 * 8 new native contexts and, with OpenCL, concurrent program builds, the
 * case that used to fail now and then. Its own ctest entry (java_eight_threads_loop).
 */
package iwpp;

import org.junit.BeforeClass;
import org.junit.Test;

public class EightThreadsLoopTest {

    @BeforeClass
    public static void load() {
        if (IwppNativeTest.backends.isEmpty())
            IwppNativeTest.load();
    }

    @Test
    public void eightThreadsFiftyTimes() throws Exception {
        int loops = Integer.getInteger("iwpp.test.loops", 50);
        long t0 = System.nanoTime();
        for (int i = 0; i < loops; i++) {
            try {
                IwppNativeTest.eightThreads();
            } catch (Throwable t) {
                throw new AssertionError("round " + (i + 1) + " of " + loops + ": " + t, t);
            }
        }
        System.out.printf("EightThreadsLoopTest: %d rounds on %s in %.1f s%n", loops, IwppNativeTest.backends,
                (System.nanoTime() - t0) / 1e9);
    }
}
