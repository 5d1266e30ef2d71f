/*
 * LabelFilterCommand.java - the commands that remove labels from a label
 * image: Remove Border Labels and Label Size Filtering (IWPP). The argument
 * from plugins.config picks the operation.
 *
 * Macro: run("Remove Border Labels (IWPP)", "[stack=3d]");
 *        run("Label Size Filtering (IWPP)", "min=10 max=0 [stack=slices]");
 * The input is a label image: 8-bit, 16-bit, or 32-bit holding whole numbers
 * (0 = background). A removed label becomes 0; the others keep their values,
 * and the result "<title>-noborder" / "<title>-sized" has the input's type.
 * Border: the first and last column and row, and in 3D (stack=3d) the first
 * and last slice. Sizes are in pixels (voxels in 3D), per volume; max=0 means
 * no upper limit.
 */
package iwpp.plugin;

import ij.IJ;
import ij.ImagePlus;
import ij.ImageStack;
import ij.WindowManager;
import ij.plugin.PlugIn;

import iwpp.IwppNative;
import iwpp.IwppOp;

public class LabelFilterCommand implements PlugIn {
    /* the command labels, from native/ops.def */
    static final String BORDER = IwppOp.REMOVE_BORDER_LABELS.command, SIZE = IwppOp.LABEL_SIZE_FILTER.command;

    @Override
    public void run(String arg) {
        final IwppOp op = IwppOp.forCommand(LabelFilterCommand.class.getName(), arg);
        final boolean size = op == IwppOp.LABEL_SIZE_FILTER;
        if (!size && op != IwppOp.REMOVE_BORDER_LABELS) {
            IwppRun.error("IWPP", "unknown operation \"" + arg + "\" in plugins.config.");
            return;
        }
        final String name = size ? SIZE : BORDER;
        if (!IwppRun.ready(name))
            return;
        ImagePlus imp = WindowManager.getCurrentImage();
        if (imp == null) {
            IwppRun.error(name, "there is no image open.");
            return;
        }
        String bad = Labels.checkLabelImage(imp, "label image");
        if (bad != null) {
            IwppRun.error(name, bad);
            return;
        }
        Options o = new Options(name);
        if (size) {
            o.addNumber("Min (pixels; smaller labels are removed)", 10, 0);
            o.addNumber("Max (pixels; larger labels are removed; 0 = no limit)", 0, 0);
        }
        IwppRun.addCommon(o, imp);
        if (!o.show())
            return;
        double min = 0, max = 0;
        if (size) {
            min = o.getNextNumber();
            max = o.getNextNumber();
        }
        int[] common = IwppRun.readCommon(o, imp);
        if (o.error() != null || o.invalidNumber()) {
            IwppRun.error(name, o.error() != null ? o.error() : "a number in the dialog is not valid.");
            return;
        }
        if (size && (!wholeCount(min) || !wholeCount(max))) {
            IwppRun.error(name, "min and max must be whole numbers of pixels, 0 or more (max=0: no upper limit), not "
                    + IJ.d2s(min, 9).replaceAll("\\.?0+$", "") + " and " + IJ.d2s(max, 9).replaceAll("\\.?0+$", "")
                    + ".");
            return;
        }
        if (size && max > 0 && max < min) {
            IwppRun.error(name, "The maximum (" + (long) max + ") is below the minimum (" + (long) min
                    + "); use max=0 for no upper limit.");
            return;
        }
        run(imp, size, (long) min, (long) max, common);
    }

    private static boolean wholeCount(double v) {
        return v >= 0 && v <= 9.0e15 && v == Math.rint(v);
    }

    private static void run(ImagePlus imp, final boolean size, final long min, final long max, int[] common) {
        final String name = size ? SIZE : BORDER;
        final boolean threeD = common[0] == 1 && imp.getNSlices() > 1;
        final int w = imp.getWidth(), h = imp.getHeight();
        final ImageStack in = imp.getStack();
        final ImageStack outStack = new ImageStack(w, h, in.getSize());
        IwppRun.Timing t = IwppRun.runVolumes(name, common[1], IwppRun.volumes(imp, threeD), new IwppRun.VolumeOp() {
            @Override
            public void run(IwppRun.Ctx c, int[] idx, int slot) {
                Object[] src = Labels.labelSlices(in, idx);
                Object[] dst = src[0] instanceof int[] ? new int[idx.length][w * h]
                        : IwppRun.newSlices(src[0] instanceof byte[] ? 8 : 16, idx.length, w * h);
                if (size)
                    IwppNative.labelSizeFilter(c.backend, c.device, c.threads, c.memoryLimit, c.workers, c.progress,
                            src, w, h, min, max, dst);
                else
                    IwppNative.removeBorderLabels(c.backend, c.device, c.threads, c.memoryLimit, c.workers,
                            c.progress, src, w, h, dst);
                for (int i = 0; i < idx.length; i++)
                    outStack.setPixels(Labels.sameTypeAsInput(dst[i]), idx[i]);
            }
        }, "labels", imp.getTitle());
        if (t == null)
            return;
        /* the same labels (a subset): the input's LUT and display range suit them */
        ImagePlus out = IwppRun.result(imp, imp, size ? "sized" : "noborder", outStack, IwppRun.SAME_VALUES);
        IwppRun.show(out);
        IwppRun.logDone(name, imp, t, (size ? "min " + min + ", max " + (max > 0 ? String.valueOf(max) : "none") + " pixels" : "")
                + (imp.getStackSize() > 1 ? (size ? ", " : "") + (threeD ? "3D" : "slice by slice") : ""), common[2] == 1);
    }
}
