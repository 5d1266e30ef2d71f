/*
 * edt_danielsson.cl - the Danielsson EDT: IWPP propagation of nearest-background indices with a
 * 32-bit compare-and-swap (edt_dan_*); the host enqueues rounds in batches (edt.c), the counts
 * staying on the device. Appended after
 * edt_exact.cl in the EDT program (FP_CONTRACT OFF there: d2 is formed as on the CPU).
 */
#define NO_INDEX 0xffffffffu

inline double site_d2(uint s, int3 c, int w, int h, double hx, double hy, double hz)
{
    int3 sc = coords_of(s, w, h);
    double tz = (double)(c.z - sc.z) * hz;
    double ty = (double)(c.y - sc.y) * hy;
    double tx = (double)(c.x - sc.x) * hx;
    return (tz * tz + ty * ty) + tx * tx;
}

/* Sites: background pixels are their own site, others none; contour pixels seed the list. */
__kernel void edt_dan_init(__global const pix_t *in, __global uint *vr, int w, int h, int d,
                           __constant int4 *offs, int noffs, uint n, __global uint *list,
                           __global volatile uint *count)
{
    uint p = (uint)get_global_id(0);
    if (p >= n) return;
    int bg = in[p] == (pix_t)0;
    vr[p] = bg ? p : NO_INDEX;
    if (!bg) return;
    int3 c = coords_of(p, w, h);
    for (int k = 0; k < noffs; ++k) {
        int4 o = offs[k];
        if (inside(c, o, w, h, d) && in[p + (uint)o.w] != (pix_t)0) {
            list[atomic_inc(count)] = p;
            return;
        }
    }
}

/* One round: every listed pixel offers its site to its neighbours; a neighbour that takes it
 * (strictly closer, by compare-and-swap) is listed for the next round, at most once per round
 * (mark holds the round number). The counts live on the device, so the host enqueues several
 * rounds between reads: round r takes its input count from cnt[r % 3], appends to cnt[(r+1) % 3]
 * (zeroed by round r - 1) and zeroes cnt[(r+2) % 3] (round r - 1's input, no longer read);
 * cnt[3..4] add up the pixels visited, cnt[5] the rounds that had work. Any global size works (a grid-stride loop over the list). */
__kernel void edt_dan_round(__global uint *vr, int w, int h, int d, __constant int4 *offs,
                            int noffs, __global const uint *in_list, __global uint *out_list,
                            __global volatile uint *cnt, __global volatile uint *mark, uint round,
                            double hx, double hy, double hz)
{
    const uint in_n = cnt[round % 3];
    __global volatile uint *out_n = cnt + (round + 1) % 3;
    if (get_global_id(0) == 0) { /* one writer per round, rounds in order: plain stores */
        cnt[(round + 2) % 3] = 0;
        const uint lo = cnt[3], nlo = lo + in_n;
        cnt[3] = nlo;
        cnt[4] += nlo < lo; /* visited: a 64-bit sum in cnt[3], cnt[4] */
        cnt[5] += in_n > 0; /* rounds that had work */
    }
    for (uint i = (uint)get_global_id(0); i < in_n; i += (uint)get_global_size(0)) {
        const uint p = in_list[i];
        const uint s = ((__global volatile uint *)vr)[p];
        const int3 c = coords_of(p, w, h);
        for (int k = 0; k < noffs; ++k) {
            const int4 o = offs[k];
            if (!inside(c, o, w, h, d)) continue;
            const uint q = p + (uint)o.w;
            const int3 cq = c + o.xyz;
            const double dn = site_d2(s, cq, w, h, hx, hy, hz);
            uint cur = ((__global volatile uint *)vr)[q];
            while (cur == NO_INDEX || dn < site_d2(cur, cq, w, h, hx, hy, hz)) {
                const uint old = atomic_cmpxchg((__global volatile uint *)&vr[q], cur, s);
                if (old == cur) {
                    if (atomic_xchg(&mark[q], round) != round) out_list[atomic_inc(out_n)] = q;
                    break;
                }
                cur = old;
            }
        }
    }
}

/* Distances (same arithmetic as the exact method) and nearest indices from the sites. */
__kernel void edt_dan_final(__global const uint *vr, __global float *dist, __global long *nearest,
                            int want_nearest, int w, int h, uint n, double hx, double hy, double hz)
{
    uint p = (uint)get_global_id(0);
    if (p >= n) return;
    uint s = vr[p];
    if (s == NO_INDEX) {
        dist[p] = INFINITY;
        if (want_nearest) nearest[p] = -1;
        return;
    }
    dist[p] = (float)sqrt(site_d2(s, coords_of(p, w, h), w, h, hx, hy, hz));
    if (want_nearest) nearest[p] = (long)s;
}
