/*
 * ImposeMinimaCommand.java - "Impose Minima (IWPP)".
 *
 * Macro: run("Impose Minima (IWPP)", "image=relief marker=seeds connectivity=8 [stack=3d] [backend=cpu]");
 * As MATLAB's imimposemin: the result (the type of the image) is lowest
 * (0, or -Infinity for 32-bit) where the marker image is nonzero and has no
 * other regional minimum: every other basin is filled up to the level at which
 * it spills towards a marker, one step (1, or the next float) above the image.
 * Neither input is modified; the result is "<image>-imposed".
 */
package iwpp.plugin;

import ij.ImagePlus;
import ij.ImageStack;
import ij.WindowManager;
import ij.plugin.PlugIn;

import iwpp.IwppNative;

public class ImposeMinimaCommand implements PlugIn {
    static final String NAME = "Impose Minima (IWPP)";

    @Override
    public void run(String arg) {
        if (!IwppRun.ready(NAME))
            return;
        final int[] ids = WindowManager.getIDList();
        final String[] titles = Labels.openTitles(ids);
        if (titles == null) {
            IwppRun.error(NAME, "This command needs two open images of the same size: an image and a marker.");
            return;
        }
        int active = Labels.activeIndex(ids);
        boolean anyStack = Labels.anyStack(ids);
        Options o = new Options(NAME);
        o.addChoice("Image", titles, titles[active]);
        o.addChoice("Marker", titles, titles[active == 0 ? Math.min(1, titles.length - 1) : 0]);
        IwppRun.addConnectivity(o, WindowManager.getImage(ids[active]), false);
        IwppRun.addStackBackendVerbose(o, anyStack, "3d");
        o.addMessage("Nonzero marker pixels become the only minima.");
        if (!o.show())
            return;
        ImagePlus image = Labels.byTitle(ids, titles, o.getNextChoice());
        ImagePlus marker = Labels.byTitle(ids, titles, o.getNextChoice());
        final int conn = Integer.parseInt(o.getNextChoice()); // a validated item
        int[] common = IwppRun.readStackBackendVerbose(o, anyStack);
        if (o.error() != null) {
            IwppRun.error(NAME, o.error());
            return;
        }
        if (image == null || marker == null) {
            IwppRun.error(NAME, "The image or the marker is no longer open.");
            return;
        }
        boolean threeD = anyStack && common[0] == 1 && image.getNSlices() > 1;
        String bad = IwppRun.checkType(image);
        if (bad == null)
            bad = IwppRun.checkType(marker);
        if (bad == null)
            bad = Labels.checkSameShape(image, "image", marker, "marker");
        if (bad == null)
            bad = IwppRun.checkConnectivity(conn, threeD, image);
        if (bad == null)
            bad = IwppRun.checkNaN(image);
        if (bad != null) {
            IwppRun.error(NAME, bad);
            return;
        }

        final int w = image.getWidth(), h = image.getHeight();
        final ImageStack in = image.getStack(), mk = marker.getStack();
        final ImageStack outStack = new ImageStack(w, h, in.getSize());
        final int depth = image.getBitDepth();
        IwppRun.Timing t = IwppRun.runVolumes(NAME, common[1], IwppRun.volumes(image, threeD),
                new IwppRun.VolumeOp() {
                    @Override
                    public void run(IwppRun.Ctx c, int[] idx, int slot) {
                        Object[] dst = IwppRun.newSlices(depth, idx.length, w * h);
                        IwppNative.imposeMinima(c.backend, c.device, c.threads, c.memoryLimit, c.workers,
                                c.progress, IwppRun.slices(in, idx), IwppRun.slices(mk, idx), w, h, conn, dst);
                        for (int i = 0; i < idx.length; i++)
                            outStack.setPixels(dst[i], idx[i]);
                    }
                }, "in", image.getTitle(), "markers", marker.getTitle());
        if (t == null)
            return;
        ImagePlus out = IwppRun.result(image, image, "imposed", outStack, IwppRun.SAME_VALUES);
        IwppRun.show(out);
        IwppRun.logDone(NAME, image, t, "marker " + marker.getTitle() + ", connectivity " + conn
                + (image.getStackSize() > 1 ? (threeD ? ", 3D" : ", slice by slice") : ""), common[2] == 1);
    }
}
