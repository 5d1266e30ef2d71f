/*
 * ReconstructionCommand.java - "Morphological Reconstruction (IWPP)".
 *
 * Macro: run("Morphological Reconstruction (IWPP)",
 *            "marker=seeds mask=cells connectivity=8 operation=dilation [stack=3d] [backend=auto]");
 * The marker is clipped to the mask first (min for dilation, max for erosion),
 * as MATLAB's imreconstruct. Neither input is modified; the result is "<marker>-rec".
 */
package iwpp.plugin;

import ij.ImagePlus;
import ij.ImageStack;
import ij.WindowManager;
import ij.plugin.PlugIn;

import iwpp.IwppNative;

public class ReconstructionCommand implements PlugIn {
    static final String NAME = "Morphological Reconstruction (IWPP)";
    static final String[] OPERATIONS = { "dilation", "erosion" };

    @Override
    public void run(String arg) {
        if (!IwppRun.ready(NAME))
            return;
        int[] ids = WindowManager.getIDList();
        if (ids == null || ids.length == 0) {
            IwppRun.error(NAME, "This command needs two open images of the same size and type: a marker and a mask.");
            return;
        }
        String[] titles = new String[ids.length];
        boolean anyStack = false;
        ImagePlus current = WindowManager.getCurrentImage();
        int active = 0;
        for (int i = 0; i < ids.length; i++) {
            ImagePlus im = WindowManager.getImage(ids[i]);
            titles[i] = im == null ? "" : im.getTitle();
            anyStack |= im != null && im.getStackSize() > 1;
            if (im != null && im == current)
                active = i;
        }
        /* the marker is the active image, the mask the first other one */
        int other = active == 0 ? Math.min(1, titles.length - 1) : 0;
        ImagePlus first = WindowManager.getImage(ids[active]);
        Options o = new Options(NAME);
        o.addChoice("Marker", titles, titles[active]);
        o.addChoice("Mask", titles, titles[other]);
        IwppRun.addConnectivity(o, first, false);
        o.addChoice("Operation", OPERATIONS, OPERATIONS[0]);
        IwppRun.addStackBackendVerbose(o, anyStack, "3d");
        if (!o.show())
            return;
        ImagePlus marker = WindowManager.getImage(ids[indexOf(titles, o.getNextChoice())]);
        ImagePlus mask = WindowManager.getImage(ids[indexOf(titles, o.getNextChoice())]);
        final int conn = Integer.parseInt(o.getNextChoice()); // a validated item
        final int mode = "erosion".equals(o.getNextChoice()) ? IwppNative.BY_EROSION : IwppNative.BY_DILATION;
        int[] common = IwppRun.readStackBackendVerbose(o, anyStack);
        boolean stack3d = anyStack && common[0] == 1;
        int backend = common[1];
        if (o.error() != null) {
            IwppRun.error(NAME, o.error());
            return;
        }
        if (marker == null || mask == null) {
            IwppRun.error(NAME, "The marker or the mask image is no longer open.");
            return;
        }
        String bad = IwppRun.checkType(marker);
        if (bad == null)
            bad = IwppRun.checkType(mask);
        if (bad == null && marker.getBitDepth() != mask.getBitDepth())
            bad = "The marker \"" + marker.getTitle() + "\" is " + marker.getBitDepth() + "-bit but the mask \""
                    + mask.getTitle() + "\" is " + mask.getBitDepth() + "-bit; convert one (Image>Type).";
        if (bad == null && (marker.getWidth() != mask.getWidth() || marker.getHeight() != mask.getHeight()
                || marker.getStackSize() != mask.getStackSize()))
            bad = "The marker \"" + marker.getTitle() + "\" is " + marker.getWidth() + "x" + marker.getHeight() + "x"
                    + marker.getStackSize() + " but the mask \"" + mask.getTitle() + "\" is " + mask.getWidth() + "x"
                    + mask.getHeight() + "x" + mask.getStackSize() + "; they must have the same size.";
        if (bad == null && (marker.getNChannels() != mask.getNChannels() || marker.getNSlices() != mask.getNSlices()
                || marker.getNFrames() != mask.getNFrames()))
            bad = "The marker \"" + marker.getTitle() + "\" has " + dims(marker) + " but the mask \"" + mask.getTitle()
                    + "\" has " + dims(mask) + "; give both the same dimensions (Image>Properties).";
        boolean threeD = stack3d && mask.getNSlices() > 1;
        if (bad == null)
            bad = IwppRun.checkConnectivity(conn, threeD, mask);
        if (bad == null)
            bad = IwppRun.checkNaN(marker);
        if (bad == null)
            bad = IwppRun.checkNaN(mask);
        if (bad != null) {
            IwppRun.error(NAME, bad);
            return;
        }

        final int w = mask.getWidth(), h = mask.getHeight();
        final ImageStack mk = marker.getStack(), ms = mask.getStack();
        final ImageStack outStack = new ImageStack(w, h, ms.getSize());
        IwppRun.Timing t = IwppRun.runVolumes(NAME, backend, IwppRun.volumes(mask, threeD),
                new IwppRun.VolumeOp() {
                    @Override
                    public void run(IwppRun.Ctx c, int[] idx, int slot) {
                        Object[] res = IwppRun.copies(IwppRun.slices(mk, idx)); // the marker stays as it is
                        IwppNative.reconstruct(c.backend, c.device, c.threads, c.memoryLimit,
                                c.workers, c.progress, res, IwppRun.slices(ms, idx), w, h, conn, mode);
                        for (int i = 0; i < idx.length; i++)
                            outStack.setPixels(res[i], idx[i]);
                    }
                }, "marker", marker.getTitle(), "mask", mask.getTitle());
        if (t == null)
            return;
        /* the title names the marker; calibration, LUTs, display range and composite mode are the mask's */
        ImagePlus out = IwppRun.result(marker, mask, "rec", outStack, IwppRun.SAME_VALUES);
        IwppRun.show(out);
        IwppRun.logDone(NAME, marker, t, "mask " + mask.getTitle() + ", connectivity " + conn + ", by "
                + OPERATIONS[mode] + (mask.getStackSize() > 1 ? (threeD ? ", 3D" : ", slice by slice") : ""),
                common[2] == 1);
    }

    private static String dims(ImagePlus imp) {
        return imp.getNChannels() + " channel(s) x " + imp.getNSlices() + " slice(s) x " + imp.getNFrames()
                + " frame(s)";
    }

    private static int indexOf(String[] a, String s) {
        for (int i = 0; i < a.length; i++)
            if (a[i].equals(s))
                return i;
        return 0;
    }
}
