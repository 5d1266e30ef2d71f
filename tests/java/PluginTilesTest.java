/*
 * PluginTilesTest.java - the plugin side of the tile settings, headless:
 * "IWPP Settings..." refuses a bad worker list or budget and saves nothing,
 * saves good ones, and Esc during a tiled command cancels it (no result image,
 * the input unchanged, "cancelled" in the log).
 *
 * Commands read macro options only on threads ImageJ names "Run$_..." (as
 * run(cmd, options) does), so each command runs on such a thread here. Prefs
 * touched are put back.
 */
package iwpp;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import ij.IJ;
import ij.ImagePlus;
import ij.Macro;
import ij.Prefs;
import ij.WindowManager;
import ij.plugin.PlugIn;
import ij.process.ByteProcessor;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.HashMap;
import java.util.Map;

import org.junit.After;
import org.junit.Before;
import org.junit.BeforeClass;
import org.junit.Test;

public class PluginTilesTest {
    static final String[] KEYS = { "iwpp.backend", "iwpp.device", "iwpp.threads", "iwpp.memory_mb", "iwpp.workers",
            "iwpp.worker_list" };
    private final Map<String, String> saved = new HashMap<String, String>();

    @BeforeClass
    public static void load() {
        IwppNative.requireLoaded();
    }

    @Before
    public void keepPrefs() {
        for (String k : KEYS)
            saved.put(k, Prefs.get(k, (String) null));
    }

    @After
    public void restorePrefs() {
        for (String k : KEYS)
            Prefs.set(k, saved.get(k)); // null removes the key
        IJ.resetEscape();
    }

    /** The current image of the last command's thread when it ended (headless: a per-thread image). */
    private static ImagePlus currentAfter;

    /**
     * Runs a command as run(cmd, options) would (on a "Run$_" thread, with @p imp
     * as that thread's current image) and returns what it logged.
     */
    static String runCommand(final PlugIn cmd, final String arg, final String options, final ImagePlus imp)
            throws Exception {
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        final Throwable[] failed = { null };
        currentAfter = null;
        Thread t = new Thread(new Runnable() {
            @Override
            public void run() {
                Macro.setOptions(Thread.currentThread(), options);
                WindowManager.setTempCurrentImage(imp);
                try {
                    cmd.run(arg);
                    currentAfter = WindowManager.getCurrentImage();
                } catch (Throwable e) {
                    failed[0] = e;
                } finally {
                    WindowManager.setTempCurrentImage(null);
                    Macro.setOptions(Thread.currentThread(), null);
                }
            }
        }, "Run$_iwpp-test");
        System.setOut(new PrintStream(buf, true, "UTF-8")); // headless IJ.log prints here
        try {
            t.start();
            t.join();
        } finally {
            System.setOut(old);
        }
        String log = buf.toString("UTF-8");
        old.print(log);
        if (failed[0] != null)
            throw new AssertionError("the command threw " + failed[0], failed[0]);
        return log;
    }

    static PlugIn settings() {
        return new iwpp.plugin.SettingsCommand();
    }

    static void setKnownPrefs() {
        Prefs.set("iwpp.backend", "cpu");
        Prefs.set("iwpp.device", "default");
        Prefs.set("iwpp.threads", 0);
        Prefs.set("iwpp.memory_mb", 7.0);
        Prefs.set("iwpp.workers", "this device");
        Prefs.set("iwpp.worker_list", "");
    }

    static void assertKnownPrefs(String what) {
        assertEquals(what + ": memory kept", 7.0, Prefs.get("iwpp.memory_mb", -1.0), 0.0);
        assertEquals(what + ": workers kept", "this device", Prefs.get("iwpp.workers", "?"));
        assertEquals(what + ": list kept", "", Prefs.get("iwpp.worker_list", "?"));
        assertEquals(what + ": threads kept", 0.0, Prefs.get("iwpp.threads", -1.0), 0.0);
    }

    @Test
    public void settingsRefuseBadValuesAndSaveNothing() throws Exception {
        setKnownPrefs();
        String common = "backend=cpu device=default threads=2 ";
        String log = runCommand(settings(), "", common + "memory=5 workers=[custom list] list=cpu*3,nonsense", null);
        assertTrue(log, log.contains("IWPP Settings... error: Workers: worker list"));
        assertTrue(log, log.contains("nonsense"));
        assertKnownPrefs("bad list");

        log = runCommand(settings(), "", common + "memory=5 workers=[custom list] list=[]", null);
        assertTrue(log, log.contains("needs a list"));
        assertKnownPrefs("empty custom list");

        log = runCommand(settings(), "", common + "memory=-1 workers=[this device]", null);
        assertTrue(log, log.contains("memory budget must be"));
        assertKnownPrefs("negative budget");

        log = runCommand(settings(), "", common + "memory=abc workers=[this device]", null);
        assertTrue(log, log.contains("error"));
        assertKnownPrefs("budget not a number");

        log = runCommand(settings(), "", common + "memory=5 workers=[every toaster]", null);
        assertTrue(log, log.contains("not a valid choice for workers="));
        assertKnownPrefs("unknown worker choice");

        /* good values are saved, and logged */
        log = runCommand(settings(), "", common + "memory=0.02 workers=[custom list] list=cpu*3", null);
        assertEquals(0.02, Prefs.get("iwpp.memory_mb", -1.0), 0.0);
        assertEquals("custom list", Prefs.get("iwpp.workers", "?"));
        assertEquals("cpu*3", Prefs.get("iwpp.worker_list", "?"));
        assertEquals(2.0, Prefs.get("iwpp.threads", -1.0), 0.0);
        assertTrue(log, log.contains("workers custom list (cpu*3)"));
        log = runCommand(settings(), "", common + "memory=64 workers=[this device, 2 streams]", null);
        assertEquals("this device, 2 streams", Prefs.get("iwpp.workers", "?"));
        assertEquals(64.0, Prefs.get("iwpp.memory_mb", -1.0), 0.0);
        assertTrue(log, log.contains("(gpu*2)"));
        /* a budget on the CPU alone is said to be a GPU budget */
        log = runCommand(settings(), "", common + "memory=64 workers=[this device]", null);
        assertTrue(log, log.contains("64 MB (a GPU budget: the CPU backend works in host memory)"));
        /* a backend this machine lacks is saved (the settings may be for another session), and said */
        if (!IwppNative.backendAvailable(IwppNative.BACKEND_CUDA)) {
            log = runCommand(settings(), "", "backend=cuda device=default threads=2 memory=0 workers=[this device]", null);
            assertEquals("cuda", Prefs.get("iwpp.backend", "?"));
            assertTrue(log, log.contains("cuda is not available on this machine ("));
            assertTrue(log, log.contains("backend auto or cpu runs here."));
        }
    }

    @Test
    public void escCancelsATiledCommand() throws Exception {
        setKnownPrefs();
        Prefs.set("iwpp.memory_mb", 0.02); // about 20000 bytes: thousands of tile runs
        final int w = TilesTest.BIG_W, h = TilesTest.BIG_H;
        byte[] pixels = ((byte[][]) TilesTest.spiralMask(8, w, h, 21))[0];
        byte[] before = pixels.clone();
        ImagePlus imp = new ImagePlus("spiral", new ByteProcessor(w, h, pixels));
        /* Esc pressed from 300 ms on (the command resets Esc when it starts), until it returns */
        final boolean[] done = { false };
        Thread esc = new Thread(new Runnable() {
            @Override
            public void run() {
                try {
                    Thread.sleep(300);
                    while (!done[0]) {
                        IJ.setKeyDown(27); // KeyEvent.VK_ESCAPE
                        Thread.sleep(20);
                    }
                } catch (InterruptedException e) {
                    /* the test is over */
                }
            }
        });
        esc.setDaemon(true);
        PlugIn fill = new iwpp.plugin.FilterCommand();
        long t0 = System.nanoTime();
        esc.start();
        String log;
        try {
            log = runCommand(fill, "fill-holes", "connectivity=8 backend=cpu verbose", imp);
        } finally {
            done[0] = true;
            esc.interrupt();
        }
        long ms = (System.nanoTime() - t0) / 1000000;
        if (log.contains("Fill Holes (IWPP): spiral")) {
            /* finished before the first Esc: acceptable on a very fast machine, but say so */
            System.out.println("PluginTilesTest: fill holes finished in " + ms + " ms, before Esc");
            return;
        }
        assertTrue(log, log.contains("Fill Holes (IWPP): cancelled"));
        assertSame("no result image became current", imp, currentAfter);
        assertArrayEquals("the input is unchanged", before, (byte[]) imp.getProcessor().getPixels());
        System.out.println("PluginTilesTest: cancelled by Esc after " + ms + " ms");
    }
}
