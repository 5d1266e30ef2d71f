/*
 * DistanceWatershedCommand.java - "Distance Transform Watershed (IWPP)".
 *
 * Macro: run("Distance Transform Watershed (IWPP)",
 *            "dynamic=1 connectivity=8 [lines] output=auto [stack=3d] [backend=cpu]");
 * Splits touching round objects of a binary image (nonzero = object): the
 * exact Euclidean distance to the background in calibrated units (pixel
 * width, height and, in 3D, depth of the image), its extended maxima of
 * dynamic "dynamic" (calibrated units: a centre must rise more than that above
 * the saddle to its neighbour to seed an object of its own) labelled as
 * markers, then the watershed of the inverted distance inside the objects.
 * Result: "<title>-dtws", labels 16-bit or 32-bit (as the labeling command).
 */
package iwpp.plugin;

import ij.IJ;
import ij.ImagePlus;
import ij.ImageStack;
import ij.WindowManager;
import ij.measure.Calibration;
import ij.plugin.PlugIn;

import iwpp.IwppNative;

public class DistanceWatershedCommand implements PlugIn {
    static final String NAME = "Distance Transform Watershed (IWPP)";

    @Override
    public void run(String arg) {
        if (!IwppRun.ready(NAME))
            return;
        ImagePlus imp = WindowManager.getCurrentImage();
        if (imp == null) {
            IwppRun.error(NAME, "there is no image open.");
            return;
        }
        String bad = IwppRun.checkType(imp);
        if (bad == null)
            bad = IwppRun.checkNaN(imp);
        if (bad != null) {
            IwppRun.error(NAME, bad);
            return;
        }
        Calibration cal = imp.getCalibration();
        Options o = new Options(NAME);
        o.addNumber("Dynamic (" + cal.getUnits() + ")", 1.0, 3);
        IwppRun.addConnectivity(o, imp, false);
        o.addCheckbox("Lines (watershed lines of 0 between objects)", false);
        o.addChoice("Output", Labels.OUTPUTS, Labels.OUTPUTS[0]);
        IwppRun.addCommon(o, imp);
        o.addMessage("Nonzero pixels are objects; distances and dynamic are in calibrated units.\n"
                + Labels.OUTPUT_NOTE);
        if (!o.show())
            return;
        final double dynamic = o.getNextNumber();
        final int conn = Integer.parseInt(o.getNextChoice()); // a validated item
        final boolean lines = o.getNextBoolean();
        final String output = o.getNextChoice();
        int[] common = IwppRun.readCommon(o, imp);
        if (o.error() != null || o.invalidNumber()) {
            IwppRun.error(NAME, o.error() != null ? o.error() : "a number in the dialog is not valid.");
            return;
        }
        if (!(dynamic >= 0 && dynamic < Double.POSITIVE_INFINITY)) {
            IwppRun.error(NAME, "The dynamic must be a finite number of 0 or more (" + cal.getUnits() + "), not "
                    + dynamic + ".");
            return;
        }
        final boolean threeD = common[0] == 1 && imp.getNSlices() > 1;
        String why = IwppRun.checkConnectivity(conn, threeD, imp);
        if (why != null) {
            IwppRun.error(NAME, why);
            return;
        }
        final double sx = cal.pixelWidth, sy = cal.pixelHeight, sz = threeD ? cal.pixelDepth : 1.0;
        if (!(sx > 0 && sy > 0 && sz > 0) || Double.isInfinite(sx) || Double.isInfinite(sy) || Double.isInfinite(sz)) {
            IwppRun.error(NAME, "The pixel size of \"" + imp.getTitle() + "\" (" + sx + " x " + sy
                    + (threeD ? " x " + sz : "") + " " + cal.getUnits()
                    + ") must be positive and finite; fix it with Image>Properties.");
            return;
        }
        run(imp, new double[] { sx, sy, sz }, dynamic, conn, lines, output, threeD, common);
    }

    private static void run(ImagePlus imp, double[] spacing, final double dynamic, final int conn,
            final boolean lines, String output, boolean threeD, int[] common) {
        final double sx = spacing[0], sy = spacing[1], sz = spacing[2];
        Calibration cal = imp.getCalibration();
        final int w = imp.getWidth(), h = imp.getHeight();
        final ImageStack in = imp.getStack();
        final int[][] vols = IwppRun.volumes(imp, threeD);
        final Object[][] results = new Object[vols.length][];
        final boolean u16 = "16-bit".equals(output);
        IwppRun.Timing t = IwppRun.runVolumes(NAME, common[1], vols, new IwppRun.VolumeOp() {
            @Override
            public void run(IwppRun.Ctx c, int[] idx, int slot) {
                Object[] lab = Labels.newLabelSlices(u16, idx.length, w * h);
                try {
                    IwppNative.distanceWatershed(c.backend, c.device, c.threads, c.memoryLimit, c.workers,
                            c.progress, IwppRun.slices(in, idx), w, h, sx, sy, sz, dynamic, conn, lines, lab);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(Labels.userOverflow(e.getMessage()), e);
                }
                results[slot] = lab;
            }
        }, "binary", imp.getTitle());
        if (t == null)
            return;
        long max = Labels.maxLabel(results);
        String tooMany = Labels.checkFits(max, output);
        if (tooMany != null) {
            IwppRun.error(NAME, tooMany);
            return;
        }
        boolean sixteen = Labels.sixteenBit(max, output);
        ImagePlus out = Labels.result(imp, imp, "dtws", Labels.assemble(w, h, in.getSize(), vols, results, sixteen),
                max);
        IwppRun.show(out);
        IwppRun.logDone(NAME, imp, t, "dynamic " + IJ.d2s(dynamic, 3) + " " + cal.getUnits() + ", spacing "
                + IJ.d2s(sx, 4) + " x " + IJ.d2s(sy, 4) + (threeD ? " x " + IJ.d2s(sz, 4) : "") + ", connectivity "
                + conn + (lines ? ", lines" : "") + ", " + max + " labels, " + (sixteen ? "16" : "32") + "-bit"
                + (imp.getStackSize() > 1 ? (threeD ? ", 3D" : ", slice by slice") : ""), common[2] == 1);
    }
}
