/*
 * Reference.java - plain, slow definitions used as the oracle of the JNI tests:
 * reconstruction by iterated elementary geodesic dilation/erosion until
 * nothing changes, and the EDT by brute force over all background pixels.
 * The composed operations are written from their definitions on top of them.
 * Values are doubles; images are contiguous x + w*(y + h*z).
 */
package iwpp;

final class Reference {
    private Reference() {
    }

    /** Neighbour offsets {dx,dy,dz} of a connectivity (6/18/26 on one slice act as 4/8/8). */
    static int[][] neighbours(int conn, int depth) {
        if (depth == 1) {
            if (conn == 6)
                conn = 4;
            if (conn == 18 || conn == 26)
                conn = 8;
        }
        java.util.List<int[]> l = new java.util.ArrayList<int[]>();
        int zr = conn == 4 || conn == 8 ? 0 : 1;
        for (int dz = -zr; dz <= zr; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int m = Math.abs(dx) + Math.abs(dy) + Math.abs(dz);
                    if (m == 0)
                        continue;
                    boolean keep = conn == 4 || conn == 6 ? m == 1 : conn == 18 ? m <= 2 : true;
                    if (keep)
                        l.add(new int[] { dx, dy, dz });
                }
        return l.toArray(new int[0][]);
    }

    /** Elementary dilation (or erosion) of @p a, out-of-image neighbours ignored. */
    static double[] unit(double[] a, int w, int h, int d, int conn, boolean dilate) {
        int[][] nb = neighbours(conn, d);
        double[] r = new double[a.length];
        for (int z = 0; z < d; z++)
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    int i = x + w * (y + h * z);
                    double v = a[i];
                    for (int[] o : nb) {
                        int xx = x + o[0], yy = y + o[1], zz = z + o[2];
                        if (xx < 0 || yy < 0 || zz < 0 || xx >= w || yy >= h || zz >= d)
                            continue;
                        double u = a[xx + w * (yy + h * zz)];
                        v = dilate ? Math.max(v, u) : Math.min(v, u);
                    }
                    r[i] = v;
                }
        return r;
    }

    /** Reconstruction by dilation (or erosion) of marker under (over) mask; marker clipped first. */
    static double[] reconstruct(double[] marker, double[] mask, int w, int h, int d, int conn, boolean dilate) {
        double[] m = new double[marker.length];
        for (int i = 0; i < m.length; i++)
            m[i] = dilate ? Math.min(marker[i], mask[i]) : Math.max(marker[i], mask[i]);
        for (boolean changed = true; changed;) {
            double[] n = unit(m, w, h, d, conn, dilate);
            changed = false;
            for (int i = 0; i < n.length; i++) {
                double v = dilate ? Math.min(n[i], mask[i]) : Math.max(n[i], mask[i]);
                if (v != m[i]) {
                    m[i] = v;
                    changed = true;
                }
            }
        }
        return m;
    }

    static boolean onBorder(int i, int w, int h, int d) {
        int x = i % w, y = (i / w) % h, z = i / (w * h);
        return x == 0 || y == 0 || x == w - 1 || y == h - 1 || (d > 1 && (z == 0 || z == d - 1));
    }

    static double[] fillHoles(double[] a, int w, int h, int d, int conn, double typeMax) {
        double[] m = new double[a.length];
        for (int i = 0; i < a.length; i++)
            m[i] = onBorder(i, w, h, d) ? a[i] : typeMax;
        return reconstruct(m, a, w, h, d, conn, false);
    }

    static double[] killBorders(double[] a, int w, int h, int d, int conn, double typeMin) {
        double[] m = new double[a.length];
        for (int i = 0; i < a.length; i++)
            m[i] = onBorder(i, w, h, d) ? a[i] : typeMin;
        double[] r = reconstruct(m, a, w, h, d, conn, true);
        for (int i = 0; i < a.length; i++)
            r[i] = a[i] - r[i];
        return r;
    }

    /** 255 where a pixel belongs to a plateau whose whole outer boundary is strictly lower (flood). */
    static double[] regionalMaxima(double[] a, int w, int h, int d, int conn, boolean maxima) {
        int[][] nb = neighbours(conn, d);
        int n = a.length;
        int[] label = new int[n];
        double[] r = new double[n];
        int[] queue = new int[n];
        for (int s = 0; s < n; s++) {
            if (label[s] != 0)
                continue;
            int head = 0, tail = 0;
            queue[tail++] = s;
            label[s] = s + 1;
            boolean extremum = true;
            while (head < tail) {
                int i = queue[head++];
                int x = i % w, y = (i / w) % h, z = i / (w * h);
                for (int[] o : nb) {
                    int xx = x + o[0], yy = y + o[1], zz = z + o[2];
                    if (xx < 0 || yy < 0 || zz < 0 || xx >= w || yy >= h || zz >= d)
                        continue;
                    int j = xx + w * (yy + h * zz);
                    if (a[j] == a[s]) {
                        if (label[j] == 0) {
                            label[j] = s + 1;
                            queue[tail++] = j;
                        }
                    } else if (maxima ? a[j] > a[s] : a[j] < a[s]) {
                        extremum = false;
                    }
                }
            }
            for (int k = 0; k < tail; k++)
                r[queue[k]] = extremum ? 255 : 0;
        }
        return r;
    }

    /** H-maxima: reconstruction by dilation of sat(a - h) under a. */
    static double[] hMaxima(double[] a, int w, int h, int d, int conn, double hv, double typeMin) {
        double[] m = new double[a.length];
        for (int i = 0; i < a.length; i++)
            m[i] = Math.max(typeMin, a[i] - hv);
        return reconstruct(m, a, w, h, d, conn, true);
    }

    static double[] hMinima(double[] a, int w, int h, int d, int conn, double hv, double typeMax) {
        double[] m = new double[a.length];
        for (int i = 0; i < a.length; i++)
            m[i] = Math.min(typeMax, a[i] + hv);
        return reconstruct(m, a, w, h, d, conn, false);
    }

    static double[] openingByReconstruction(double[] a, int w, int h, int d, int conn, int radius, boolean opening) {
        double[] e = a.clone();
        for (int k = 0; k < radius; k++)
            e = unit(e, w, h, d, conn, !opening);
        return reconstruct(e, a, w, h, d, conn, opening);
    }

    /** Brute-force EDT with spacing; Infinity where there is no background. */
    static double[] edt(double[] a, int w, int h, int d, double sx, double sy, double sz) {
        double[] r = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            if (a[i] == 0)
                continue;
            int x = i % w, y = (i / w) % h, z = i / (w * h);
            double best = Double.POSITIVE_INFINITY;
            for (int j = 0; j < a.length; j++) {
                if (a[j] != 0)
                    continue;
                double dx = (j % w - x) * sx, dy = ((j / w) % h - y) * sy, dz = (j / (w * h) - z) * sz;
                best = Math.min(best, dx * dx + dy * dy + dz * dz);
            }
            r[i] = Math.sqrt(best);
        }
        return r;
    }
}
