/*
 * GuiPathTest.java - the commands as ImageJ's GUI runs them, on a display
 * (ctest runs this under xvfb-run): ImageJ builds its own command table from
 * its AWT menus, run(cmd, options) goes through ij.Executer and the
 * GenericDialog reads the options, the Recorder records, and a dialog can be
 * shown and answered. Checks: every bad choice stops the macro (IJ.run throws
 * "Macro canceled"), logs a message naming the allowed values and makes no
 * image; the Recorder writes backend= only when the user picked another
 * backend, and nothing for a failed run; the marker defaults to the active
 * image. Skipped without a display.
 */
package iwpp;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import ij.Executer;
import ij.IJ;
import ij.ImagePlus;
import ij.Menus;
import ij.Prefs;
import ij.WindowManager;
import ij.gui.GenericDialog;
import ij.plugin.frame.Recorder;
import ij.process.ByteProcessor;

import java.awt.Choice;
import java.awt.EventQueue;
import java.awt.GraphicsEnvironment;
import java.awt.Window;
import java.awt.event.ActionEvent;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Hashtable;

import org.junit.After;
import org.junit.Assume;
import org.junit.Before;
import org.junit.BeforeClass;
import org.junit.Test;

public class GuiPathTest {
    static final String[] KEYS = { "iwpp.backend", "iwpp.device", "iwpp.verbose" };
    private final String[] saved = new String[KEYS.length];

    @BeforeClass
    public static void imageJ() throws Exception {
        Assume.assumeFalse("needs a display (xvfb-run)", GraphicsEnvironment.isHeadless());
        IwppNative.requireLoaded();
        IJ.run("Close All"); // ImageJ builds its command table from its AWT menus
        /* the commands of the plugin jar, as ImageJ would read them from plugins/IWPP_Plugin.jar; the classes
           come from the class path (the plugin class loader's parent), so the native library loads once */
        @SuppressWarnings("unchecked")
        Hashtable<String, String> table = Menus.getCommands();
        assertNotNull("ImageJ's command table", table);
        imageJTable = new Hashtable<String, String>(table); // before the plugin's commands are added
        InputStream in = GuiPathTest.class.getResourceAsStream("/plugins.config");
        assertNotNull("plugins.config in the plugin jar", in);
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
        for (String line; (line = r.readLine()) != null;) {
            line = line.trim();
            int q1 = line.indexOf('"'), q2 = q1 < 0 ? -1 : line.indexOf('"', q1 + 1);
            int comma = q2 < 0 ? -1 : line.indexOf(',', q2);
            if (line.startsWith("#") || comma < 0)
                continue;
            table.put(line.substring(q1 + 1, q2), line.substring(comma + 1).trim());
        }
        r.close();
    }

    private static Hashtable<String, String> imageJTable;

    /** The headless table (IwppHeadless.install) holds every command of ImageJ's own, built from its menus. */
    @Test
    public void headlessTableHoldsEveryBuiltInCommand() {
        Hashtable<String, String> ours = iwpp.plugin.IwppHeadless.builtInCommands();
        StringBuilder missing = new StringBuilder();
        int n = 0;
        for (java.util.Map.Entry<String, String> e : imageJTable.entrySet()) {
            if (!e.getValue().startsWith("ij.")) // plugins, macros and scripts found in folders
                continue;
            if (e.getKey().startsWith("Main Window [")) // label built at run time; brings the ImageJ window up
                continue;
            n++;
            if (!e.getValue().equals(ours.get(e.getKey())))
                missing.append("\n  ").append(e.getKey()).append(" -> ").append(e.getValue()).append(" (ours: ")
                        .append(ours.get(e.getKey())).append(')');
        }
        assertTrue("ImageJ listed only " + n + " commands", n > 300);
        assertEquals("commands of ImageJ's menus missing from the headless table:" + missing, "", missing.toString());
    }

    @Before
    public void keep() {
        for (int i = 0; i < KEYS.length; i++)
            saved[i] = Prefs.get(KEYS[i], (String) null);
        Prefs.set("iwpp.backend", "auto");
        Prefs.set("iwpp.device", "default");
        Prefs.set("iwpp.verbose", false);
    }

    @After
    public void restore() {
        for (int i = 0; i < KEYS.length; i++)
            Prefs.set(KEYS[i], saved[i]);
        Recorder.record = false;
        Recorder rec = Recorder.getInstance();
        if (rec != null)
            rec.close();
        int[] ids = WindowManager.getIDList();
        if (ids != null)
            for (int id : ids) {
                ImagePlus imp = WindowManager.getImage(id);
                if (imp != null) {
                    imp.changes = false;
                    imp.close();
                }
            }
    }

    static ImagePlus image(String title, int slices) {
        ImagePlus imp;
        if (slices == 1) {
            ByteProcessor bp = new ByteProcessor(16, 12);
            for (int y = 3; y < 9; y++)
                for (int x = 3; x < 9; x++)
                    bp.set(x, y, 200);
            bp.set(5, 5, 0);
            imp = new ImagePlus(title, bp);
        } else {
            imp = IJ.createImage(title, "8-bit black", 16, 12, slices);
        }
        imp.show();
        return imp;
    }

    /** run(cmd, options) with @p current as the active image; the macro's abort message, or null. */
    static String run(ImagePlus current, String cmd, String options) {
        if (current != null)
            WindowManager.setTempCurrentImage(current);
        IJ.redirectErrorMessages(); // an error goes to the Log, not to a modal dialog
        try {
            IJ.run(cmd, options);
            return null;
        } catch (RuntimeException e) {
            return String.valueOf(e.getMessage());
        } finally {
            WindowManager.setTempCurrentImage(null);
        }
    }

    /**
     * Runs a macro whose one command must stop it; returns what was logged
     * (without an ImageJ window, IJ.log writes to System.out).
     */
    void assertRefused(ImagePlus current, String cmd, String options, String message) {
        int before = WindowManager.getImageCount();
        PrintStream old = System.out;
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        String ret;
        try {
            System.setOut(new PrintStream(buf, true));
            if (current != null)
                WindowManager.setCurrentWindow(current.getWindow());
            IJ.redirectErrorMessages(); // an error goes to the Log, not to a modal dialog
            ret = IJ.runMacro((current != null ? "selectImage(\"" + current.getTitle() + "\");\n" : "")
                    + "run(\"" + cmd + "\", \"" + options.replace("\"", "\\\"") + "\");\nreturn \"went on\";");
        } finally {
            System.setOut(old);
        }
        String log = buf.toString();
        System.out.print(log);
        /* an aborted macro returns null (or "[aborted]"), one that went on its last value */
        assertTrue(cmd + " " + options + ": the macro was not stopped (log: " + log + ")",
                ret == null || ret.equals("[aborted]"));
        assertTrue(cmd + " " + options + ": no message \"" + message + "\" in the log: " + log, log.contains(message));
        assertEquals(cmd + " " + options + ": an image was made", before, WindowManager.getImageCount());
    }

    @Test
    public void everyBadChoiceStopsTheMacroAndMakesNoImage() {
        ImagePlus img = image("img", 1);
        ImagePlus stack = image("stack", 4);
        image("seed", 1);
        assertRefused(img, "Kill Borders (IWPP)", "connectivity=8 backend=gpu",
                "\"gpu\" is not a valid choice for backend=; use auto, cpu, cuda or opencl.");
        assertRefused(img, "Distance Transform (IWPP)", "method=chamfer",
                "\"chamfer\" is not a valid choice for method=; use exact or danielsson.");
        assertRefused(img, "Morphological Reconstruction (IWPP)", "marker=seed mask=img connectivity=8 operation=opening",
                "\"opening\" is not a valid choice for operation=; use dilation or erosion.");
        assertRefused(stack, "Fill Holes (IWPP)", "connectivity=4 stack=volume",
                "\"volume\" is not a valid choice for stack=; use slices or 3d.");
        assertRefused(img, "Morphological Reconstruction (IWPP)", "marker=nosuch mask=img connectivity=8",
                "\"nosuch\" is not a valid choice for marker=; use img, stack or seed.");
        assertRefused(img, "Fill Holes (IWPP)", "connectivity=6",
                "Connectivity 6 is for 3D volumes, but \"img\" is a 2D image; use 4 or 8.");
        assertRefused(img, "IWPP Settings...", "backend=cpu device=[OpenCL 7: nothing] threads=0 memory=0 "
                + "workers=[this device]", "\"OpenCL 7: nothing\" is not a valid choice for device=; use default");
        assertEquals("nothing saved", "auto", Prefs.get("iwpp.backend", "?"));
        assertEquals("nothing saved", "default", Prefs.get("iwpp.device", "?"));
        /* and a good choice still runs */
        assertEquals(null, run(img, "Fill Holes (IWPP)", "connectivity=4"));
        assertNotNull("img-filled", WindowManager.getImage("img-filled"));
    }

    static String recorded() {
        Recorder rec = Recorder.getInstance();
        return rec == null ? "" : rec.getText();
    }

    static void startRecorder() {
        new Recorder();
        Recorder.record = true;
        Recorder.recordInMacros = true; // run(cmd, options) here stands for a user's click
    }

    @Test
    public void recordsBackendOnlyWhenChosenAndNothingForAFailedRun() {
        ImagePlus img = image("img", 1);
        startRecorder();
        run(img, "Fill Holes (IWPP)", "connectivity=4");
        String text = recorded();
        assertTrue(text, text.contains("run(\"Fill Holes (IWPP)\", \"connectivity=4\");"));
        run(img, "Fill Holes (IWPP)", "connectivity=4 backend=cpu");
        text = recorded();
        assertTrue(text, text.contains("run(\"Fill Holes (IWPP)\", \"connectivity=4 backend=cpu\");"));
        String before = recorded();
        run(img, "Fill Holes (IWPP)", "connectivity=26");
        run(img, "Kill Borders (IWPP)", "connectivity=8 backend=gpu");
        assertEquals("a failed run is not recorded", before, recorded());
    }

    /** Shows @p cmd's dialog as a menu click does, picks @p backend (null: leaves it), presses OK. */
    static void clickThrough(ImagePlus imp, String cmd, final String backend) throws Exception {
        int images = WindowManager.getImageCount();
        String before = recorded();
        new Executer(cmd, imp); // its own thread, as from the menu
        GenericDialog gd = null;
        for (int i = 0; i < 1200 && gd == null; i++) { // waits for the dialog (bounded: no timing check)
            for (Window w : Window.getWindows())
                if (w instanceof GenericDialog && w.isVisible())
                    gd = (GenericDialog) w;
            if (gd == null)
                Thread.sleep(100);
        }
        assertNotNull("the dialog of " + cmd + " did not show", gd);
        /* Dialog.show() makes the dialog visible before it creates its modal loop; a dispose() in between
           finds no loop to end, and show() then blocks for ever (java.awt.Dialog: secondaryLoop is still
           null). Press OK only once the showing thread is inside the loop (bounded: no timing check). */
        Thread shower = null;
        for (int i = 0; i < 1200 && (shower = threadInModalLoop()) == null; i++)
            Thread.sleep(100);
        assertNotNull("the dialog of " + cmd + " never entered its modal loop\n" + threadDump(), shower);
        pressOK(gd, backend);
        /* The Recorder writes the command's line after the command returns: wait for it (bounded, no timing
           check). Should the press still have been lost (CI saw nothing recorded 2 minutes after it, once,
           under heavy load; not reproduced here), the command's thread is still inside the dialog's show():
           press OK again, which is what a user does when a click does not take. */
        int presses = 1;
        for (int i = 1; i <= 1200 && recorded().equals(before); i++) {
            if (i % 50 == 0 && insideDialogShow(shower)) {
                pressOK(gd, null);
                presses++;
            }
            Thread.sleep(100);
        }
        assertFalse(cmd + ": nothing was recorded after OK (pressed " + presses + " times)\n" + threadDump(),
                recorded().equals(before));
        assertTrue(cmd + ": no result image", WindowManager.getImageCount() > images);
    }

    /** Picks @p backend in the dialog's backend choice (null: leaves it) and presses OK, on the event thread. */
    static void pressOK(final GenericDialog dialog, final String backend) throws Exception {
        EventQueue.invokeAndWait(new Runnable() {
            @Override
            public void run() {
                if (backend != null)
                    for (Object c : dialog.getChoices())
                        for (int k = 0; k < ((Choice) c).getItemCount(); k++)
                            if (((Choice) c).getItem(k).equals("opencl")) // the backend choice
                                ((Choice) c).select(backend);
                dialog.actionPerformed(new ActionEvent(dialog.getButtons()[0], ActionEvent.ACTION_PERFORMED, "OK"));
            }
        });
    }

    /** The thread blocked in a modal dialog's show(), past the point where dispose() can end it, or null:
     *  inside WaitDispatchSupport.enter and waiting there (while it still runs, enter has not yet armed
     *  the flag that exit() clears, and a dispose() then is lost; under load that window widened enough
     *  to fail 1 run in 9 of ctest -j2 --repeat). */
    static Thread threadInModalLoop() {
        for (java.util.Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            Thread.State state = e.getKey().getState();
            if (state != Thread.State.WAITING && state != Thread.State.TIMED_WAITING)
                continue;
            boolean entered = false;
            for (StackTraceElement f : e.getValue()) {
                if (f.getClassName().equals("java.awt.WaitDispatchSupport") && f.getMethodName().equals("enter"))
                    entered = true;
                else if (entered && f.getClassName().equals("java.awt.Dialog") && f.getMethodName().equals("show"))
                    return e.getKey();
            }
        }
        return null;
    }

    /** Whether @p t is still inside java.awt.Dialog.show(). */
    static boolean insideDialogShow(Thread t) {
        for (StackTraceElement f : t.getStackTrace())
            if (f.getClassName().equals("java.awt.Dialog") && f.getMethodName().equals("show"))
                return true;
        return false;
    }

    /** Every thread's state and top frames, and the windows showing: what a failure needs to be understood. */
    static String threadDump() {
        StringBuilder b = new StringBuilder("windows showing:");
        for (Window w : Window.getWindows())
            if (w.isShowing())
                b.append(' ').append(w.getClass().getName()).append('[').append(w.getName()).append(']');
        for (java.util.Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            b.append("\nthread \"").append(e.getKey().getName()).append("\" ").append(e.getKey().getState());
            StackTraceElement[] st = e.getValue();
            for (int k = 0; k < st.length && k < 14; k++)
                b.append("\n    at ").append(st[k]);
        }
        return b.toString();
    }

    @Test
    public void dialogRecordsBackendOnlyWhenTheUserPicksOne() throws Exception {
        ImagePlus img = image("img", 1);
        startRecorder();
        clickThrough(img, "Fill Holes (IWPP)", null);
        String text = recorded();
        assertTrue(text, text.contains("run(\"Fill Holes (IWPP)\", \"connectivity=4\");"));
        assertFalse(text, text.contains("backend="));
        clickThrough(img, "Fill Holes (IWPP)", "cpu");
        text = recorded();
        assertTrue(text, text.contains("run(\"Fill Holes (IWPP)\", \"connectivity=4 backend=cpu\");"));
    }

    /** The options of the last recorded run("cmd", "options") line of @p cmd. */
    static String recordedOptions(String cmd) {
        String text = recorded(), head = "run(\"" + cmd + "\", \"";
        int at = text.lastIndexOf(head);
        assertTrue(cmd + " was not recorded: " + text, at >= 0);
        int end = text.indexOf("\");", at);
        return text.substring(at + head.length(), end);
    }

    @Test
    public void labelDialogsRecordKeysThatReplayTheSameResult() throws Exception {
        ImagePlus seeds = image("seeds", 1);
        seeds.getProcessor().set(0);
        seeds.getProcessor().set(3, 3, 1);
        seeds.getProcessor().set(8, 8, 2);
        ImagePlus relief = image("relief", 1); // active: the input; the marker defaults to the other image
        startRecorder();
        clickThrough(relief, "Marker-controlled Watershed (IWPP)", null);
        String opts = recordedOptions("Marker-controlled Watershed (IWPP)");
        assertEquals("input=relief marker=seeds mask=None connectivity=8 output=auto", opts);
        ImagePlus clicked = WindowManager.getImage("relief-watershed");
        assertNotNull(clicked);
        assertEquals(null, run(relief, "Marker-controlled Watershed (IWPP)", opts));
        ImagePlus replayed = WindowManager.getImage("relief-watershed-1");
        assertNotNull(replayed);
        assertTrue("the recorded keys give the same labels",
                java.util.Arrays.equals((short[]) clicked.getProcessor().getPixels(),
                        (short[]) replayed.getProcessor().getPixels()));
        assertEquals("both seeds flood", 2.0, clicked.getProcessor().getStatistics().max, 0);

        clickThrough(relief, "Connected Components Labeling (IWPP)", null);
        assertEquals("mode=binary connectivity=8 output=auto", recordedOptions("Connected Components Labeling (IWPP)"));
        assertNotNull(WindowManager.getImage("relief-labels"));
    }

    @Test
    public void markerDefaultsToTheActiveImageAndMaskToTheOther() {
        image("cells", 1);
        ImagePlus marker = image("my marker", 1);
        marker.getProcessor().set(4, 4, 255);
        /* the macro returns the title of the result and a pixel of it */
        String got = IJ.runMacro("selectImage(\"my marker\");\n"
                + "run(\"Morphological Reconstruction (IWPP)\", \"connectivity=8 operation=dilation\");\n"
                + "return getTitle() + \" \" + getPixel(4, 4);");
        assertEquals("the marker is the active image, the mask the other one", "my marker-rec 200", got);
        got = IJ.runMacro("selectImage(\"cells\");\n"
                + "run(\"Morphological Reconstruction (IWPP)\", \"connectivity=8 operation=erosion\");\n"
                + "return getTitle();");
        assertEquals("cells-rec", got);
    }
}
