/*
 * LabelReference.java - plain definitions for the label tests (LabelsTest):
 * labeling by flood fill in raster order (the first pixel met opens the next
 * label), and the watershed straight from the definition of iwpp_watershed in
 * native/include/iwpp.h: every pixel holds (L, D, label), markers are fixed at
 * (in, 0, label), the others are recomputed from their reached neighbours'
 * current states until nothing changes, taking the least candidate
 * (L, D, L_q, D_q, label_q) (after a climb, the flood that arrived first wins);
 * then the optional lines. Images are contiguous x + w*(y + h*z).
 */
package iwpp;

import java.util.ArrayDeque;

final class LabelReference {
    private LabelReference() {
    }

    /** Labels of the nonzero pixels into @p labels (equal: joined only to equal values); returns the count. */
    static long label(double[] a, int w, int h, int d, int conn, boolean equal, long[] labels) {
        int[][] nb = Reference.neighbours(conn, d);
        java.util.Arrays.fill(labels, 0);
        long next = 0;
        ArrayDeque<Integer> queue = new ArrayDeque<Integer>();
        for (int start = 0; start < a.length; start++) {
            if (a[start] == 0 || labels[start] != 0)
                continue;
            labels[start] = ++next;
            queue.add(start);
            while (!queue.isEmpty()) {
                int p = queue.poll();
                int x = p % w, y = (p / w) % h, z = p / (w * h);
                for (int[] o : nb) {
                    int xx = x + o[0], yy = y + o[1], zz = z + o[2];
                    if (xx < 0 || yy < 0 || zz < 0 || xx >= w || yy >= h || zz >= d)
                        continue;
                    int q = xx + w * (yy + h * zz);
                    if (a[q] == 0 || labels[q] != 0 || (equal && a[q] != a[p]))
                        continue;
                    labels[q] = next;
                    queue.add(q);
                }
            }
        }
        return next;
    }

    private static boolean less(double la, long da, long ka, double lb, long db, long kb) {
        if (la != lb)
            return la < lb;
        if (da != db)
            return da < db;
        return ka < kb;
    }

    /** (L, D, L_q, D_q, label) of a candidate: @p a before @p b. */
    private static boolean lessCandidate(double[] a, double[] b) {
        for (int k = 0; k < 5; k++)
            if (a[k] != b[k])
                return a[k] < b[k];
        return false;
    }

    /** The watershed of @p in from @p markers inside @p mask (null = everywhere). */
    static long[] watershed(double[] in, long[] markers, double[] mask, int w, int h, int d, int conn,
            boolean lines) {
        int n = in.length;
        int[][] nb = Reference.neighbours(conn, d);
        double[] level = in.clone();
        long[] steps = new long[n], lab = new long[n];
        boolean[] fixed = new boolean[n];
        for (int i = 0; i < n; i++) {
            fixed[i] = (mask == null || mask[i] != 0) && markers[i] != 0;
            lab[i] = fixed[i] ? markers[i] : 0;
        }
        for (boolean changed = true; changed;) {
            changed = false;
            for (int p = 0; p < n; p++) {
                if (fixed[p] || (mask != null && mask[p] == 0))
                    continue;
                /* recomputed from the neighbours' current states (not a minimum with p's earlier
                   state: a label that reaches a neighbour only at a worse cost must not stay) */
                int x = p % w, y = (p / w) % h, z = p / (w * h);
                double[] best = null;
                for (int[] o : nb) {
                    int xx = x + o[0], yy = y + o[1], zz = z + o[2];
                    if (xx < 0 || yy < 0 || zz < 0 || xx >= w || yy >= h || zz >= d)
                        continue;
                    int q = xx + w * (yy + h * zz);
                    if (lab[q] == 0)
                        continue;
                    boolean climb = in[p] > level[q];
                    double cl = climb ? in[p] : level[q];
                    long cd = climb ? 0 : steps[q] + 1;
                    double[] cand = { cl, cd, level[q], steps[q], lab[q] };
                    if (best == null || lessCandidate(cand, best))
                        best = cand;
                }
                double bl = best == null ? in[p] : best[0];
                long bd = best == null ? 0 : (long) best[1], bk = best == null ? 0 : (long) best[4];
                if (bk != lab[p] || bl != level[p] || bd != steps[p]) {
                    level[p] = bl;
                    steps[p] = bd;
                    lab[p] = bk;
                    changed = true;
                }
            }
        }
        long[] out = lab.clone();
        if (!lines)
            return out;
        for (int p = 0; p < n; p++) {
            if (lab[p] == 0 || fixed[p])
                continue;
            int x = p % w, y = (p / w) % h, z = p / (w * h);
            for (int[] o : nb) {
                int xx = x + o[0], yy = y + o[1], zz = z + o[2];
                if (xx < 0 || yy < 0 || zz < 0 || xx >= w || yy >= h || zz >= d)
                    continue;
                int q = xx + w * (yy + h * zz);
                if (lab[q] != 0 && lab[q] != lab[p]
                        && less(level[q], steps[q], lab[q], level[p], steps[p], lab[p]))
                    out[p] = 0;
            }
        }
        return out;
    }
}
