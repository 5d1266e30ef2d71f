/*
 * LabelingCommand.java - "Connected Components Labeling (IWPP)".
 *
 * Macro: run("Connected Components Labeling (IWPP)",
 *            "mode=binary connectivity=8 output=auto [stack=3d] [backend=cpu] [verbose]");
 * mode=binary joins any two nonzero neighbours; mode=equal-value joins nonzero
 * neighbours of equal value (a label or gray image split by value). Labels are
 * numbered in raster order of each component's first pixel (as MATLAB bwlabel
 * and scikit-image label), per volume: per slice with stack=slices. The
 * result "<title>-labels" is 16-bit or 32-bit (float, exact up to 16777216
 * labels; more are refused); output=auto picks 16-bit when the labels fit.
 */
package iwpp.plugin;

import ij.ImagePlus;
import ij.ImageStack;
import ij.WindowManager;
import ij.plugin.PlugIn;

import iwpp.IwppNative;

public class LabelingCommand implements PlugIn {
    static final String NAME = "Connected Components Labeling (IWPP)";
    static final String[] MODES = { "binary", "equal-value" };

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
        Options o = new Options(NAME);
        o.addChoice("Mode", MODES, MODES[0]);
        IwppRun.addConnectivity(o, imp, false);
        o.addChoice("Output", Labels.OUTPUTS, Labels.OUTPUTS[0]);
        IwppRun.addCommon(o, imp);
        o.addMessage("Nonzero pixels are labelled; " + Labels.OUTPUT_NOTE);
        if (!o.show())
            return;
        final int mode = MODES[1].equals(o.getNextChoice()) ? IwppNative.LABEL_EQUAL : IwppNative.LABEL_BINARY;
        final int conn = Integer.parseInt(o.getNextChoice()); // a validated item
        final String output = o.getNextChoice();
        int[] common = IwppRun.readCommon(o, imp);
        if (o.error() != null) {
            IwppRun.error(NAME, o.error());
            return;
        }
        boolean threeD = common[0] == 1 && imp.getNSlices() > 1;
        String why = IwppRun.checkConnectivity(conn, threeD, imp);
        if (why != null) {
            IwppRun.error(NAME, why);
            return;
        }

        final int w = imp.getWidth(), h = imp.getHeight();
        final ImageStack in = imp.getStack();
        final int[][] vols = IwppRun.volumes(imp, threeD);
        final Object[][] results = new Object[vols.length][];
        final long[] counts = new long[vols.length];
        /* 16-bit asked: the library refuses an overflow itself; else 32-bit labels, narrowed afterwards */
        final boolean u16 = "16-bit".equals(output);
        IwppRun.Timing t = IwppRun.runVolumes(NAME, common[1], vols, new IwppRun.VolumeOp() {
            @Override
            public void run(IwppRun.Ctx c, int[] idx, int slot) {
                Object[] lab = Labels.newLabelSlices(u16, idx.length, w * h);
                try {
                    counts[slot] = IwppNative.label(c.backend, c.device, c.threads, c.memoryLimit, c.workers,
                            c.progress, IwppRun.slices(in, idx), w, h, conn, mode, lab);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException(Labels.userOverflow(e.getMessage()), e);
                }
                results[slot] = lab;
            }
        }, "in", imp.getTitle());
        if (t == null)
            return;
        long max = 0;
        for (long n : counts)
            max = Math.max(max, n);
        String tooMany = Labels.checkFits(max, output);
        if (tooMany != null) {
            IwppRun.error(NAME, tooMany);
            return;
        }
        boolean sixteen = Labels.sixteenBit(max, output);
        ImageStack stack = Labels.assemble(w, h, in.getSize(), vols, results, sixteen);
        ImagePlus out = Labels.result(imp, imp, "labels", stack, max);
        IwppRun.show(out);
        IwppRun.logDone(NAME, imp, t, MODES[mode] + ", connectivity " + conn + ", " + max + " labels"
                + (vols.length > 1 ? " (most in one " + (threeD ? "volume" : "slice") + ")" : "")
                + ", " + (sixteen ? "16" : "32") + "-bit"
                + (imp.getStackSize() > 1 ? (threeD ? ", 3D" : ", slice by slice") : ""), common[2] == 1);
    }
}
