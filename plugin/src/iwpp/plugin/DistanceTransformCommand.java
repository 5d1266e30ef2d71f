/*
 * DistanceTransformCommand.java - "Distance Transform (IWPP)".
 *
 * Macro: run("Distance Transform (IWPP)", "method=exact [nearest] [stack=3d] [backend=auto]");
 * Nonzero pixels are foreground. The result "<title>-edt" is 32-bit: the
 * Euclidean distance to the nearest zero pixel in calibrated units (pixel
 * width, height and depth of the image), 0 on background, Infinity when the
 * image has no background. With "nearest", "<title>-nearest" holds the linear
 * index x + y*width (+ z*width*height in 3D) of that nearest background pixel,
 * -1 where there is none.
 */
package iwpp.plugin;

import ij.IJ;
import ij.ImagePlus;
import ij.ImageStack;
import ij.WindowManager;
import ij.measure.Calibration;
import ij.plugin.PlugIn;

import iwpp.IwppNative;

public class DistanceTransformCommand implements PlugIn {
    static final String NAME = "Distance Transform (IWPP)";
    static final String[] METHODS = { "exact", "danielsson" };

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
        o.addChoice("Method", METHODS, METHODS[0]);
        o.addCheckbox("Nearest background index image", false);
        IwppRun.addCommon(o, imp);
        o.addMessage("Nonzero pixels are foreground; distances are in calibrated units.");
        if (!o.show())
            return;
        final int method = "danielsson".equals(o.getNextChoice()) ? IwppNative.EDT_DANIELSSON : IwppNative.EDT_EXACT;
        final boolean nearest = o.getNextBoolean();
        int[] common = IwppRun.readCommon(o, imp);
        if (o.error() != null) {
            IwppRun.error(NAME, o.error());
            return;
        }
        final boolean threeD = common[0] == 1 && imp.getNSlices() > 1;
        Calibration cal = imp.getCalibration();
        final double sx = cal.pixelWidth, sy = cal.pixelHeight;
        final double sz = threeD ? cal.pixelDepth : 1.0;
        if (!(sx > 0 && sy > 0 && sz > 0) || Double.isInfinite(sx) || Double.isInfinite(sy) || Double.isInfinite(sz)) {
            IwppRun.error(NAME, "The pixel size of \"" + imp.getTitle() + "\" (" + sx + " x " + sy
                    + (threeD ? " x " + sz : "") + " " + cal.getUnits()
                    + ") must be positive and finite; fix it with Image>Properties.");
            return;
        }
        final int w = imp.getWidth(), h = imp.getHeight();
        final ImageStack in = imp.getStack();
        final ImageStack dist = new ImageStack(w, h, in.getSize());
        final ImageStack near = nearest ? new ImageStack(w, h, in.getSize()) : null;
        int[][] vols = IwppRun.volumes(imp, threeD);
        if (nearest && (long) w * h * vols[0].length > (1L << 24))
            IJ.log(NAME + ": warning: nearest-background indices above 16777216 are rounded in a 32-bit image.");
        final boolean[] noBackground = new boolean[vols.length];
        IwppRun.Timing t = IwppRun.runVolumes(NAME, common[1], vols, new IwppRun.VolumeOp() {
            @Override
            public void run(IwppRun.Ctx c, int[] idx, int slot) {
                float[][] d = new float[idx.length][w * h];
                long[][] n = nearest ? new long[idx.length][w * h] : null;
                IwppNative.distanceTransform(c.backend, c.device, c.threads, c.memoryLimit,
                        c.workers, c.progress, IwppRun.slices(in, idx), w, h, method, sx, sy, sz, d, n);
                /* a volume without a zero pixel is +Infinity everywhere (pixel 0 is then +Infinity) */
                noBackground[slot] = d[0][0] == Float.POSITIVE_INFINITY;
                for (int i = 0; i < idx.length; i++) {
                    dist.setPixels(d[i], idx[i]);
                    if (n != null) {
                        float[] f = new float[w * h];
                        long[] src = n[i];
                        for (int k = 0; k < f.length; k++)
                            f[k] = src[k];
                        near.setPixels(f, idx[i]);
                    }
                }
            }
        }, "binary", imp.getTitle());
        if (t == null)
            return;
        int without = 0, first = -1;
        for (int v = 0; v < vols.length; v++)
            if (noBackground[v]) {
                without++;
                if (first < 0)
                    first = v;
            }
        if (without > 0) // always said: a map of +Infinity is rarely what was meant
            IJ.log(NAME + ": warning: \"" + imp.getTitle() + "\" has no zero (background) pixel"
                    + (vols.length > 1 ? " in " + without + " of its " + vols.length + " "
                            + (threeD ? "volumes" : "slices") + " (the first: slice " + vols[first][0] + ")" : "")
                    + ", so its distances there are all Infinity; threshold or invert it first "
                    + "(distances are measured to the nearest zero pixel).");
        ImagePlus out = IwppRun.result(imp, imp, "edt", dist, IwppRun.DISTANCE);
        if (near != null) {
            ImagePlus ni = IwppRun.result(imp, imp, "nearest", near, IwppRun.DISTANCE);
            IwppRun.show(ni);
        }
        IwppRun.show(out); // the distance map is the active image
        IwppRun.logDone(NAME, imp, t, METHODS[method] + ", spacing " + IJ.d2s(sx, 4) + " x " + IJ.d2s(sy, 4)
                + (threeD ? " x " + IJ.d2s(sz, 4) : "") + " " + cal.getUnits()
                + (imp.getStackSize() > 1 ? (threeD ? ", 3D" : ", slice by slice") : ""), common[2] == 1);
    }
}
