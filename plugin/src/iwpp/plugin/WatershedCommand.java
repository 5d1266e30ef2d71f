/*
 * WatershedCommand.java - "Marker-controlled Watershed (IWPP)".
 *
 * Macro: run("Marker-controlled Watershed (IWPP)",
 *            "input=relief marker=seeds mask=None connectivity=8 [lines] output=auto [stack=3d] [backend=cpu]");
 * The relief (8-, 16- or 32-bit) is flooded from the labels of the marker
 * image (8-bit, 16-bit, or 32-bit holding whole numbers; 0 = no marker),
 * inside the mask (nonzero = inside; None = the whole image). The result is
 * unique: a pixel takes the label of the marker that reaches it at the lowest
 * flooding level, then the fewest steps on that level's plateau; where floods
 * climb into a pixel, the one that arrived first; then the smallest label
 * (native/include/iwpp.h, iwpp_watershed). With "lines",
 * watershed lines of 0 separate the regions. Result: "<input>-watershed".
 */
package iwpp.plugin;

import ij.ImagePlus;
import ij.ImageStack;
import ij.WindowManager;
import ij.plugin.PlugIn;

import iwpp.IwppNative;

public class WatershedCommand implements PlugIn {
    static final String NAME = "Marker-controlled Watershed (IWPP)";

    @Override
    public void run(String arg) {
        if (!IwppRun.ready(NAME))
            return;
        final int[] ids = WindowManager.getIDList();
        final String[] titles = Labels.openTitles(ids);
        if (titles == null) {
            IwppRun.error(NAME, "This command needs open images: a relief (input), a marker label image and, "
                    + "optionally, a mask.");
            return;
        }
        int active = Labels.activeIndex(ids);
        boolean anyStack = Labels.anyStack(ids);
        ImagePlus first = WindowManager.getImage(ids[active]);
        Options o = new Options(NAME);
        o.addChoice("Input", titles, titles[active]);
        o.addChoice("Marker", titles, titles[active == 0 ? Math.min(1, titles.length - 1) : 0]);
        o.addChoice("Mask", Labels.withNone(titles), Labels.NONE);
        IwppRun.addConnectivity(o, first, false);
        o.addCheckbox("Lines (watershed lines of 0 between regions)", false);
        o.addChoice("Output", Labels.OUTPUTS, Labels.OUTPUTS[0]);
        IwppRun.addStackBackendVerbose(o, anyStack, "3d");
        o.addMessage(Labels.OUTPUT_NOTE);
        if (!o.show())
            return;
        ImagePlus input = Labels.byTitle(ids, titles, o.getNextChoice());
        ImagePlus marker = Labels.byTitle(ids, titles, o.getNextChoice());
        String maskTitle = o.getNextChoice();
        ImagePlus mask = Labels.NONE.equals(maskTitle) ? null : Labels.byTitle(ids, titles, maskTitle);
        final int conn = Integer.parseInt(o.getNextChoice()); // a validated item
        final boolean lines = o.getNextBoolean();
        final String output = o.getNextChoice();
        int[] common = IwppRun.readStackBackendVerbose(o, anyStack);
        if (o.error() != null) {
            IwppRun.error(NAME, o.error());
            return;
        }
        if (input == null || marker == null || (mask == null && !Labels.NONE.equals(maskTitle))) {
            IwppRun.error(NAME, "The input, marker or mask image is no longer open.");
            return;
        }
        boolean threeD = anyStack && common[0] == 1 && input.getNSlices() > 1;
        String bad = check(input, marker, mask, conn, threeD);
        if (bad != null) {
            IwppRun.error(NAME, bad);
            return;
        }
        run(input, marker, mask, conn, lines, output, threeD, common);
    }

    /** null if the three images can be used together, else why not. */
    private static String check(ImagePlus input, ImagePlus marker, ImagePlus mask, int conn, boolean threeD) {
        String bad = IwppRun.checkType(input);
        if (bad == null)
            bad = Labels.checkSameShape(input, "input", marker, "marker");
        if (bad == null && mask != null)
            bad = IwppRun.checkType(mask);
        if (bad == null && mask != null)
            bad = Labels.checkSameShape(input, "input", mask, "mask");
        if (bad == null)
            bad = IwppRun.checkConnectivity(conn, threeD, input);
        if (bad == null)
            bad = IwppRun.checkNaN(input);
        if (bad == null && mask != null)
            bad = IwppRun.checkNaN(mask);
        if (bad == null)
            bad = Labels.checkLabelImage(marker, "marker");
        return bad;
    }

    private static void run(ImagePlus input, ImagePlus marker, ImagePlus mask, final int conn, final boolean lines,
            String output, boolean threeD, int[] common) {
        final int w = input.getWidth(), h = input.getHeight();
        final ImageStack in = input.getStack(), mk = marker.getStack();
        final ImageStack ms = mask == null ? null : mask.getStack();
        final int[][] vols = IwppRun.volumes(input, threeD);
        final Object[][] results = new Object[vols.length][];
        final boolean u16 = "16-bit".equals(output);
        IwppRun.Timing t = IwppRun.runVolumes(NAME, common[1], vols, new IwppRun.VolumeOp() {
            @Override
            public void run(IwppRun.Ctx c, int[] idx, int slot) {
                Object[] lab = Labels.newLabelSlices(u16, idx.length, w * h);
                try {
                    IwppNative.watershed(c.backend, c.device, c.threads, c.memoryLimit, c.workers, c.progress,
                            IwppRun.slices(in, idx), Labels.labelSlices(mk, idx),
                            ms == null ? null : IwppRun.slices(ms, idx), w, h, conn, lines, lab);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(Labels.userOverflow(e.getMessage()), e);
                }
                results[slot] = lab;
            }
        }, "in", input.getTitle(), "markers", marker.getTitle(), "mask", mask == null ? "" : mask.getTitle());
        if (t == null)
            return;
        long max = Labels.maxLabel(results);
        String tooMany = Labels.checkFits(max, output);
        if (tooMany != null) {
            IwppRun.error(NAME, tooMany);
            return;
        }
        boolean sixteen = Labels.sixteenBit(max, output);
        ImagePlus out = Labels.result(input, input, "watershed",
                Labels.assemble(w, h, in.getSize(), vols, results, sixteen), max);
        IwppRun.show(out);
        IwppRun.logDone(NAME, input, t, "markers " + marker.getTitle() + (mask != null ? ", mask " + mask.getTitle() : "")
                + ", connectivity " + conn + (lines ? ", lines" : "") + ", " + (sixteen ? "16" : "32") + "-bit"
                + (input.getStackSize() > 1 ? (threeD ? ", 3D" : ", slice by slice") : ""), common[2] == 1);
    }
}
