/*
 * neighborhood.h - neighbour offsets for each connectivity (internal).
 * Shared by the CPU backend, the GPU host code and the test oracle so that
 * every place agrees on what "connectivity 18" means.
 */
#ifndef IWPP_NEIGHBORHOOD_H
#define IWPP_NEIGHBORHOOD_H

/**
 * Fill off[i] = {dx, dy, dz} for every neighbour of connectivity @p conn
 * (4, 8, 6, 18, 26) and return their number; 0 for an unknown connectivity.
 * With @p flat (an image of depth 1), 6 is treated as 4 and 18/26 as 8.
 * Offsets come in raster order (z, then y, then x increasing), so the first
 * half are the neighbours met before the centre in a raster scan (N+) and the
 * second half those met after it (N-).
 */
static inline int iwpp_neighbors(int conn, int flat, int off[26][3])
{
    if (flat && conn == 6) conn = 4;
    if (flat && (conn == 18 || conn == 26)) conn = 8;
    if (conn != 4 && conn != 6 && conn != 8 && conn != 18 && conn != 26) return 0;
    /* Whether z is involved at all, and the most axes a neighbour may differ in. Written without
     * a switch: in the library build on the GPU machine (gcc 13.3, -O3) an earlier form with a
     * switch returned 0 for connectivity 4 and 6 while standalone builds returned 4. */
    const int zr = (conn == 4 || conn == 8) ? 0 : 1;
    const int max_axes = (conn == 4 || conn == 6) ? 1 : (conn == 18 ? 2 : 3);
    int n = 0;
    for (int dz = -zr; dz <= zr; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                const int axes = (dx != 0) + (dy != 0) + (dz != 0);
                if (axes == 0 || axes > max_axes) continue;
                off[n][0] = dx;
                off[n][1] = dy;
                off[n][2] = dz;
                ++n;
            }
    return n;
}

/** 1 if @p conn is valid for an image of depth @p depth (see iwpp_reconstruct). */
static inline int iwpp_connectivity_valid(int conn, long long depth)
{
    if (conn == 4 || conn == 8) return depth == 1;
    return conn == 6 || conn == 18 || conn == 26;
}

#endif /* IWPP_NEIGHBORHOOD_H */
