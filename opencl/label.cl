/*
 * label.cl - connected-component labeling (opencl/labels.c): union-find in which every root is
 * the smallest pixel index of its set, so that after flattening, the roots are the components'
 * first pixels in raster order; their ranks (an exclusive prefix sum of root flags) number the
 * components 1, 2, ... as iwpp_label asks. Indices are 32-bit: the host refuses larger images.
 * Appended after common.cl in the labeling program (pix_t = the input's pixel type).
 */
#define NO_ROOT 0xffffffffu

/* Foreground pixels start as their own root; background has none. */
__kernel void lab_init(__global const pix_t *in, __global uint *parent, uint n)
{
    const uint p = (uint)get_global_id(0);
    if (p >= n) return;
    parent[p] = in[p] != (pix_t)0 ? p : NO_ROOT;
}

inline uint find_root(__global volatile uint *parent, uint x)
{
    uint up;
    while ((up = parent[x]) != x) x = up;
    return x;
}

/* Joins the sets of a and b: the larger root goes under the smaller one with atomic_min. When
 * another work-item linked that root first, atomic_min still keeps the smaller parent and the
 * loop goes on with the parent it displaced, so no link is lost. */
inline void unite(__global volatile uint *parent, uint a, uint b)
{
    for (;;) {
        a = find_root(parent, a);
        b = find_root(parent, b);
        if (a == b) return;
        if (a > b) {
            const uint t = a;
            a = b;
            b = t;
        }
        const uint old = atomic_min(&parent[b], a);
        if (old == b) return;
        b = old;
    }
}

/* Each foreground pixel joins its joined neighbours that come before it in raster order (negative
 * linear offset; the later ones join it from their side). */
__kernel void lab_merge(__global const pix_t *in, __global volatile uint *parent, int w, int h,
                        int d, __constant int4 *offs, int noffs, int equal, uint n)
{
    const uint p = (uint)get_global_id(0);
    if (p >= n) return;
    const pix_t v = in[p];
    if (v == (pix_t)0) return;
    const int3 c = coords_of(p, w, h);
    for (int k = 0; k < noffs; ++k) {
        const int4 o = offs[k];
        if (o.w >= 0 || !inside(c, o, w, h, d)) continue;
        const uint q = p + (uint)o.w;
        const pix_t u = in[q];
        if (u == (pix_t)0 || (equal && u != v)) continue;
        unite(parent, p, q);
    }
}

/* Every pixel points straight at its root; flag = 1 on roots. Roots no longer change, so
 * concurrent shortening is harmless. */
__kernel void lab_flatten(__global volatile uint *parent, __global uint *flag, uint n)
{
    const uint p = (uint)get_global_id(0);
    if (p >= n) return;
    if (parent[p] == NO_ROOT) {
        flag[p] = 0;
        return;
    }
    const uint r = find_root(parent, p);
    parent[p] = r;
    flag[p] = r == p;
}

/*
 * Exclusive prefix sum, in place, of data[0..n) in blocks of SCAN_ITEMS * local size: loaded into
 * local memory with coalesced reads, each work-item sums its SCAN_ITEMS consecutive values, the
 * work-group scans those sums, each work-item writes its values' prefixes back. The block's total
 * goes to sums[group]; the host scans the sums the same way and adds them back (scan_add).
 */
#define SCAN_ITEMS 8

__kernel void scan_block(__global uint *data, uint doff, uint n, __global uint *sums, uint soff,
                         __local uint *tile, __local uint *part)
{
    data += doff; /* the levels above the first share one buffer of sums */
    sums += soff;
    const uint L = (uint)get_local_size(0), lid = (uint)get_local_id(0);
    const ulong base = (ulong)get_group_id(0) * L * SCAN_ITEMS;
    for (uint i = 0; i < SCAN_ITEMS; ++i) {
        const ulong idx = base + (ulong)i * L + lid;
        tile[i * L + lid] = idx < n ? data[idx] : 0u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint sum = 0;
    for (uint i = 0; i < SCAN_ITEMS; ++i) sum += tile[lid * SCAN_ITEMS + i];
    part[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < L; off <<= 1) { /* L sums: L log L adds, as many as the items */
        const uint t = lid >= off ? part[lid - off] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        part[lid] += t;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint run = part[lid] - sum;
    for (uint i = 0; i < SCAN_ITEMS; ++i) {
        const uint v = tile[lid * SCAN_ITEMS + i];
        tile[lid * SCAN_ITEMS + i] = run;
        run += v;
    }
    if (lid == L - 1) sums[get_group_id(0)] = part[L - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = 0; i < SCAN_ITEMS; ++i) {
        const ulong idx = base + (ulong)i * L + lid;
        if (idx < n) data[idx] = tile[i * L + lid];
    }
}

/* Adds the scanned block sums: block b of data gets sums[b]. */
__kernel void scan_add(__global uint *data, uint doff, uint n, __global const uint *sums,
                       uint soff, uint block)
{
    data += doff;
    sums += soff;
    const ulong idx = get_global_id(0);
    if (idx < n) data[idx] += sums[idx / block];
}

/* Labels: rank of the root + 1 (rank = the scanned root flags), 0 on background. */
#define LAB_WRITE(NAME, LT)                                                                        \
    __kernel void NAME(__global const uint *parent, __global const uint *rank,                     \
                       __global LT *labels, uint n)                                                \
    {                                                                                              \
        const uint p = (uint)get_global_id(0);                                                     \
        if (p >= n) return;                                                                        \
        const uint r = parent[p];                                                                  \
        labels[p] = r == NO_ROOT ? (LT)0 : (LT)(rank[r] + 1u);                                     \
    }
LAB_WRITE(lab_write_u16, ushort)
LAB_WRITE(lab_write_u32, uint)
