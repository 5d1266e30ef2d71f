/*
 * label_runs.cuh - the rules of label.cu's 2D path by row runs (internal), written for host and
 * device alike so that tests/test_label_tiles.cpp checks them where CI has no GPU.
 *
 * A tile is 32 x 32 pixels; one warp lane per column, so one row of a tile is a 32-bit mask.
 * Inside a row, a pixel joined to its left neighbour continues that neighbour's run; the others
 * that are foreground start a run (bit set in the row's start mask S). A run is represented by
 * its start, which is also its smallest index, so the union-find on run starts (smaller root
 * wins) keeps every root at the smallest raster index of its set, as label_common.cuh does.
 *
 * A lower run [a, b] touches the upper runs that hold a foreground pixel of its reach, [a - 1, b + 1]
 * (8-connected) or [a, b] (4-connected), clipped to the tile: those that start inside the reach,
 * and the one that started before it and covers its first column (lr_touching names each once).
 * Runs hold one value each, so in EQUAL mode one comparison of the two runs' values decides.
 */
#ifndef IWPP_CUDA_LABEL_RUNS_CUH
#define IWPP_CUDA_LABEL_RUNS_CUH

#include "label_common.cuh"

#define LR_SIDE 32

#ifdef LB_HOST
static inline int lr_clz(unsigned int v) { return v ? __builtin_clz(v) : 32; }
static inline int lr_popc(unsigned int v) { return __builtin_popcount(v); }
#else
__device__ __forceinline__ int lr_clz(unsigned int v) { return __clz(v); }
__device__ __forceinline__ int lr_popc(unsigned int v) { return __popc(v); }
#endif

/* Bits 0..x of a row mask. */
LB_FN unsigned int lr_upto(int x) { return x >= 31 ? ~0u : (2u << x) - 1u; }

/* The start of the run that holds foreground column @p x, given the row's start mask @p S. */
LB_FN int lr_start(unsigned int S, int x) { return 31 - lr_clz(S & lr_upto(x)); }

/* The start mask of a row from its foreground mask @p F and the mask @p J of pixels joined to their
 * left neighbour (bit x: x > 0, both foreground and, in EQUAL mode, equal). */
LB_FN unsigned int lr_starts(unsigned int F, unsigned int J) { return F & ~J; }

/* Count of trailing ones. */
LB_FN int lr_ones(unsigned int v) { return v == ~0u ? 32 : 31 - lr_clz(~v & (v + 1u)); }

/* The last column of the run that starts at column @p a of a row with foreground mask @p F and start
 * mask @p S: the run goes on while pixels join their left neighbour (F & ~S; in EQUAL mode a
 * foreground stretch can hold several runs). */
LB_FN int lr_run_end(unsigned int F, unsigned int S, int a)
{
    return a >= LR_SIDE - 1 ? a : a + lr_ones((F & ~S) >> (a + 1));
}

/* Calls each(s) once for the start s of every upper run (masks FU, SU) that touches the lower run
 * [a, b]. */
template <typename E> LB_FN void lr_touching(int a, int b, unsigned int FU, unsigned int SU, bool conn8, E each)
{
    const int lo = conn8 && a > 0 ? a - 1 : a, hi = conn8 && b < LR_SIDE - 1 ? b + 1 : b;
    const unsigned int W = lr_upto(hi) & ~(lo > 0 ? lr_upto(lo - 1) : 0u) & FU;
    if (!W) return;
    if (((W >> lo) & 1u) && !((SU >> lo) & 1u)) each(lr_start(SU, lo)); /* began left of the reach */
    for (unsigned int st = SU & W; st; st &= st - 1u) each(31 - lr_clz(st & (~st + 1u)));
}

/* The earlier rows that row (y, z) of a tile touches: k = 0 is (y - 1, z); in 3D k = 1, 2, 3 are
 * (y - 1, y, y + 1) at z - 1. lr_reach: how far along x the neighbourhood of connectivity @p conn
 * reaches into row k (1: x - 1 .. x + 1, 0: x alone, -1: not a neighbour row). */
LB_FN int lr_row_dy(int k) { return k == 0 ? -1 : k - 2; }
LB_FN int lr_row_dz(int k) { return k == 0 ? 0 : -1; }
LB_FN int lr_reach(int conn, int k)
{
    if (conn == 4) return 0;
    if (conn == 8 || conn == 26) return 1;
    const bool straight = k == 0 || k == 2; /* one axis besides x */
    if (conn == 18) return straight ? 1 : 0;
    return straight ? 0 : -1; /* 6 */
}

/* The ring of a tile in the border array: local roots (global indices, or NONE) of its top row,
 * bottom row, left column and right column, 32 each. */
#define LR_RING 128
#define LR_TOP 0
#define LR_BOTTOM 32
#define LR_LEFT 64
#define LR_RIGHT 96

/* Pairs of one boundary between two tiles: side a's pixel i (along the boundary) against side
 * b's pixels i - 1, i, i + 1 (8-connected) or i, both given as their local roots (NONE: background).
 * A pair whose roots an earlier pair of the same boundary already joins is skipped: the pair
 * (i - 1, i - 1) with the same two roots, or for a diagonal, the straight pair (i, i) that reaches
 * the same root of b. joined(j) checks the values in EQUAL mode; unite(ra, rb) joins two roots. */
template <typename IdxT, typename J, typename U>
LB_FN void lr_boundary_pairs(int i, const IdxT *a, const IdxT *b, bool conn8, J joined, U unite)
{
    const IdxT none = lb_none<IdxT>();
    const IdxT ra = a[i];
    if (ra == none) return;
    const IdxT straight = b[i];
    const bool straight_joined = straight != none && joined(i);
    if (straight_joined && !(i > 0 && a[i - 1] == ra && b[i - 1] == straight)) unite(ra, straight);
    if (!conn8) return;
    for (int d = -1; d <= 1; d += 2) {
        const int j = i + d;
        if (j < 0 || j >= LR_SIDE) continue;
        const IdxT rb = b[j];
        if (rb == none || (straight_joined && rb == straight) || !joined(j)) continue;
        unite(ra, rb);
    }
}

#ifndef LB_HOST
/* label_runs.cu: whether the row-run path takes this call (images below 2^32 - 1 pixels: 2D, or 3D
 * with a U32 output, whose stored local roots the 3D border pass reads; not with
 * IWPP_CUDA_LABEL_RUNS=0), and the path itself; @p gb is the backward half of the neighbourhood. */
bool cu_label_runs_on(iwpp_context *ctx, const iwpp_buf *in, const iwpp_buf *labels);
iwpp_status cu_label_runs(iwpp_context *ctx, const iwpp_buf *in, const geom &gb, int equal, iwpp_buf *labels,
                          int64_t *count);
#endif

#endif
