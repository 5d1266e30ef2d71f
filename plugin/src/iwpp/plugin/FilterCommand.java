/*
 * FilterCommand.java - the one-image commands built on reconstruction:
 * Fill Holes, Kill Borders, Regional Maxima/Minima, H-Maxima/H-Minima,
 * Opening/Closing by Reconstruction, Extended Maxima/Minima (IWPP). The argument from plugins.config
 * picks the operation.
 *
 * Macro: run("Fill Holes (IWPP)", "connectivity=4 [stack=3d] [backend=cpu]");
 *        run("H-Maxima (IWPP)", "h=20 connectivity=8");
 *        run("Opening by Reconstruction (IWPP)", "radius=3 connectivity=8");
 *        run("Extended Maxima (IWPP)", "dynamic=10 connectivity=8");
 * Extended maxima (minima): the regional maxima (minima) of the h-maxima
 * (h-minima) with h = dynamic, as MATLAB imextendedmax: a 0/255 8-bit image of
 * the maxima that rise more than "dynamic" above their surroundings.
 * The native call is one for all: IwppNative.filter with the op of native/ops.def.
 */
package iwpp.plugin;

import ij.IJ;
import ij.ImagePlus;
import ij.ImageStack;
import ij.WindowManager;
import ij.plugin.PlugIn;

import iwpp.IwppNative;
import iwpp.IwppOp;

public class FilterCommand implements PlugIn {

    /* What the dialog and the result need beyond native/ops.def's line (IwppOp: the
       plugins.config argument, the command label, the output type). */
    enum Op {
        FILL_HOLES(IwppOp.FILL_HOLES, "filled", true),
        KILL_BORDERS(IwppOp.KILL_BORDERS, "killBorders", false),
        REGIONAL_MAXIMA(IwppOp.REGIONAL_MAXIMA, "rmax", false),
        REGIONAL_MINIMA(IwppOp.REGIONAL_MINIMA, "rmin", false),
        H_MAXIMA(IwppOp.H_MAXIMA, "hmax", false),
        H_MINIMA(IwppOp.H_MINIMA, "hmin", false),
        OPENING(IwppOp.OPENING, "opening", false),
        CLOSING(IwppOp.CLOSING, "closing", false),
        EXTENDED_MAXIMA(IwppOp.EXTENDED_MAXIMA, "emax", false),
        EXTENDED_MINIMA(IwppOp.EXTENDED_MINIMA, "emin", false);

        final IwppOp op;
        final String command, suffix;
        final boolean backgroundConnectivity, binaryOutput;

        Op(IwppOp op, String suffix, boolean bg) {
            this.op = op;
            this.command = op.command;
            this.suffix = suffix;
            this.backgroundConnectivity = bg;
            this.binaryOutput = op.out == IwppOp.Out.U8;
        }

        boolean extended() {
            return this == EXTENDED_MAXIMA || this == EXTENDED_MINIMA;
        }

        static Op fromArg(String arg) {
            IwppOp o = IwppOp.forCommand(FilterCommand.class.getName(), arg);
            for (Op f : values())
                if (f.op == o)
                    return f;
            return null;
        }
    }

    @Override
    public void run(String arg) {
        final Op op = Op.fromArg(arg);
        if (op == null) {
            IwppRun.error("IWPP", "unknown operation \"" + arg + "\" in plugins.config.");
            return;
        }
        if (!IwppRun.ready(op.command))
            return;
        ImagePlus imp = WindowManager.getCurrentImage();
        if (imp == null) {
            IwppRun.error(op.command, "there is no image open.");
            return;
        }
        String bad = IwppRun.checkType(imp);
        if (bad == null)
            bad = IwppRun.checkNaN(imp);
        if (bad != null) {
            IwppRun.error(op.command, bad);
            return;
        }

        Options o = new Options(op.command);
        if (op == Op.H_MAXIMA || op == Op.H_MINIMA)
            o.addNumber("h", 10, imp.getBitDepth() == 32 ? 3 : 0);
        if (op.extended())
            o.addNumber("Dynamic", 10, imp.getBitDepth() == 32 ? 3 : 0);
        if (op == Op.OPENING || op == Op.CLOSING)
            o.addNumber("Radius (pixels, 0 to " + IwppRun.MAX_RADIUS + ")", 2, 0);
        IwppRun.addConnectivity(o, imp, op.backgroundConnectivity);
        IwppRun.addCommon(o, imp);
        if (op == Op.FILL_HOLES)
            o.addMessage("Connectivity is that of the background (holes); 4 (2D) and 6 (3D) as in ImageJ.");
        if (!o.show())
            return;
        double h = 0;
        int radius = 0;
        if (op == Op.H_MAXIMA || op == Op.H_MINIMA || op.extended())
            h = o.getNextNumber();
        if (op == Op.OPENING || op == Op.CLOSING) {
            double r = o.getNextNumber();
            radius = (int) Math.round(r);
            if (!(r >= 0) || r > IwppRun.MAX_RADIUS || Math.abs(r - radius) > 1e-9) {
                if (o.error() == null)
                    IwppRun.error(op.command, "The radius must be a whole number of pixels from 0 to "
                            + IwppRun.MAX_RADIUS + ", not " + IJ.d2s(r, 9).replaceAll("\\.?0+$", "") + ".");
                else
                    IwppRun.error(op.command, o.error());
                return;
            }
        }
        final int conn = Integer.parseInt(o.getNextChoice()); // a validated item of CONNECTIVITIES
        int[] common = IwppRun.readCommon(o, imp);
        if (o.error() != null || o.invalidNumber()) {
            IwppRun.error(op.command, o.error() != null ? o.error() : "a number in the dialog is not valid.");
            return;
        }
        if ((op == Op.H_MAXIMA || op == Op.H_MINIMA || op.extended()) && !(h >= 0 && h < Double.POSITIVE_INFINITY)) {
            IwppRun.error(op.command, (op.extended() ? "The dynamic" : "h") + " must be a finite number of 0 or more, not "
                    + h + ".");
            return;
        }
        boolean threeD = common[0] == 1 && imp.getNSlices() > 1;
        String why = IwppRun.checkConnectivity(conn, threeD, imp);
        if (why != null) {
            IwppRun.error(op.command, why);
            return;
        }

        final int w = imp.getWidth(), ht = imp.getHeight();
        final ImageStack in = imp.getStack();
        final ImageStack outStack = new ImageStack(w, ht, in.getSize());
        final int outDepth = op.binaryOutput ? 8 : imp.getBitDepth();
        final double hv = h;
        final int rad = radius;
        IwppRun.Timing t = IwppRun.runVolumes(op.command, common[1], IwppRun.volumes(imp, threeD),
                new IwppRun.VolumeOp() {
                    @Override
                    public void run(IwppRun.Ctx c, int[] idx, int slot) {
                        Object[] src = IwppRun.slices(in, idx);
                        Object[] dst = IwppRun.newSlices(outDepth, idx.length, w * ht);
                        /* h (or the dynamic) or the radius: the op's kind says which it reads */
                        IwppNative.filter(op.op, c.backend, c.device, c.threads, c.memoryLimit, c.workers,
                                c.progress, src, w, ht, op.op.kind == IwppOp.Kind.FILTER_RADIUS ? rad : hv, conn,
                                dst);
                        for (int i = 0; i < idx.length; i++)
                            outStack.setPixels(dst[i], idx[i]);
                    }
                }, "in", imp.getTitle());
        if (t == null)
            return;
        ImagePlus out = IwppRun.result(imp, imp, op.suffix, outStack,
                op.binaryOutput ? IwppRun.BINARY : IwppRun.SAME_VALUES);
        IwppRun.show(out);
        String what = "connectivity " + conn + (imp.getStackSize() > 1 ? (threeD ? ", 3D" : ", slice by slice") : "")
                + (op == Op.H_MAXIMA || op == Op.H_MINIMA ? ", h " + IJ.d2s(h, 3) : "")
                + (op.extended() ? ", dynamic " + IJ.d2s(h, 3) : "")
                + (op == Op.OPENING || op == Op.CLOSING ? ", radius " + radius : "");
        IwppRun.logDone(op.command, imp, t, what, common[2] == 1);
    }
}
