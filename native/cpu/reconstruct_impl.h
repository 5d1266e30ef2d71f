/*
 * reconstruct_impl.h - type- and mode-specialised kernels of the CPU
 * reconstruction (internal; included only by cpu/reconstruct.c).
 *
 * Included once per (pixel type, mode) pair with these macros defined:
 *   RT    the pixel type (uint8_t, uint16_t, float)
 *   RSUF  a suffix token naming the specialisation (e.g. u8_dil)
 *   RDIL  1 for reconstruction by dilation, 0 for erosion
 * and undefines them at the end. Everything below is written for dilation
 * ("raise J towards the mask"); for erosion the comparisons flip:
 *   R_GT(a, b)   a propagates over b      (a > b  |  a < b)
 *   R_PICK(a, b) the stronger of a and b  (max    |  min)
 *   R_CLIP(v, m) v limited by the mask m  (min    |  max)
 *
 * Each kernel comes as an always-inline core taking the neighbour counts as
 * arguments, and a thin wrapper that switches once on the connectivity and
 * calls the core with constants, so every (type, mode, connectivity) gets its
 * own fully unrolled loop.
 */

#define R_CAT2(a, b) a##_##b
#define R_CAT(a, b) R_CAT2(a, b)
#define RFN(name) R_CAT(name, RSUF)

#if RDIL
#define R_GT(a, b) ((a) > (b))
#define R_PICK(a, b) ((a) > (b) ? (a) : (b))
#define R_CLIP(v, m) ((v) < (m) ? (v) : (m))
#else
#define R_GT(a, b) ((a) < (b))
#define R_PICK(a, b) ((a) < (b) ? (a) : (b))
#define R_CLIP(v, m) ((v) > (m) ? (v) : (m))
#endif

/* ---- one pixel with bounds checks (box border) --------------------------------- */

/* Raster-scan update of pixel i at (x, y, z) from neighbours k0..k1-1 inside the box. */
R_INLINE RT RFN(scan_px_checked)(RT *J, const RT *I, const rc_nbhd *nb, const rc_box *b,
                                 int64_t x, int64_t y, int64_t z, int64_t i, int k0, int k1)
{
    RT v = J[i];
    for (int k = k0; k < k1; ++k) {
        if (!rc_in_box(b, x + nb->dx[k], y + nb->dy[k], z + nb->dz[k])) continue;
        RT u = J[i + nb->off[k]];
        v = R_PICK(v, u);
    }
    RT m = I[i];
    v = R_CLIP(v, m);
    J[i] = v;
    return v;
}

/* Anti-raster test: does pixel i (value v) still have an N- neighbour inside the box it can raise? */
R_INLINE int RFN(bwd_needs_queue_checked)(const RT *J, const RT *I, const rc_nbhd *nb,
                                          const rc_box *b, int64_t x, int64_t y, int64_t z,
                                          int64_t i, RT v)
{
    for (int k = nb->nh; k < nb->n; ++k) {
        if (!rc_in_box(b, x + nb->dx[k], y + nb->dy[k], z + nb->dz[k])) continue;
        int64_t q = i + nb->off[k];
        RT u = J[q];
        if (R_GT(v, u) && R_GT(I[q], u)) return 1;
    }
    return 0;
}

/* ---- the raster and anti-raster scans of a box --------------------------------- */

R_INLINE void RFN(scan_fwd_core)(RT *J, const RT *I, const rc_geom *g, const rc_nbhd *nb,
                                 const rc_box *b, const int nh)
{
    int64_t off[13];
    for (int k = 0; k < nh; ++k) off[k] = nb->off[k];
    for (int64_t z = b->z0; z < b->z1; ++z) {
        int zin = g->flat || (z > b->z0 && z < b->z1 - 1);
        for (int64_t y = b->y0; y < b->y1; ++y) {
            const int64_t row = z * g->sz + y * g->sy;
            if (!(zin && y > b->y0 && y < b->y1 - 1)) {
                for (int64_t x = b->x0; x < b->x1; ++x)
                    RFN(scan_px_checked)(J, I, nb, b, x, y, z, row + x, 0, nh);
                continue;
            }
            RFN(scan_px_checked)(J, I, nb, b, b->x0, y, z, row + b->x0, 0, nh);
            if (b->x1 - b->x0 < 2) continue;
            const int64_t xe = row + b->x1 - 1;
            if (nh == 4 && g->flat) {
                /* 2D, 8-connected: the left neighbour stays in a register. */
                RT prev = J[row + b->x0];
                const RT *up = J + row - g->sy;
                for (int64_t i = row + b->x0 + 1; i < xe; ++i) {
                    RT a = up[i - row - 1], c = up[i - row], e = up[i - row + 1];
                    RT v = J[i];
                    v = R_PICK(v, a);
                    v = R_PICK(v, c);
                    v = R_PICK(v, e);
                    v = R_PICK(v, prev);
                    RT m = I[i];
                    v = R_CLIP(v, m);
                    J[i] = v;
                    prev = v;
                }
            } else if (nh == 2 && g->flat) {
                /* 2D, 4-connected. */
                RT prev = J[row + b->x0];
                const RT *up = J + row - g->sy;
                for (int64_t i = row + b->x0 + 1; i < xe; ++i) {
                    RT c = up[i - row];
                    RT v = J[i];
                    v = R_PICK(v, c);
                    v = R_PICK(v, prev);
                    RT m = I[i];
                    v = R_CLIP(v, m);
                    J[i] = v;
                    prev = v;
                }
            } else {
                for (int64_t i = row + b->x0 + 1; i < xe; ++i) {
                    RT v = J[i];
                    for (int k = 0; k < nh; ++k) {
                        RT u = J[i + off[k]];
                        v = R_PICK(v, u);
                    }
                    RT m = I[i];
                    v = R_CLIP(v, m);
                    J[i] = v;
                }
            }
            RFN(scan_px_checked)(J, I, nb, b, b->x1 - 1, y, z, xe, 0, nh);
        }
    }
}

R_INLINE void RFN(scan_bwd_core)(RT *J, const RT *I, const rc_geom *g, const rc_nbhd *nb,
                                 const rc_box *b, rc_fifo *f, const int nn, const int nh)
{
    int64_t off[26];
    for (int k = 0; k < nn; ++k) off[k] = nb->off[k];
    for (int64_t z = b->z1 - 1; z >= b->z0; --z) {
        int zin = g->flat || (z > b->z0 && z < b->z1 - 1);
        for (int64_t y = b->y1 - 1; y >= b->y0; --y) {
            const int64_t row = z * g->sz + y * g->sy;
            if (!(zin && y > b->y0 && y < b->y1 - 1) || b->x1 - b->x0 < 2) {
                for (int64_t x = b->x1 - 1; x >= b->x0; --x) {
                    int64_t i = row + x;
                    RT v = RFN(scan_px_checked)(J, I, nb, b, x, y, z, i, nh, nn);
                    if (RFN(bwd_needs_queue_checked)(J, I, nb, b, x, y, z, i, v)) rc_push(f, i);
                }
                continue;
            }
            {
                int64_t x = b->x1 - 1, i = row + x;
                RT v = RFN(scan_px_checked)(J, I, nb, b, x, y, z, i, nh, nn);
                if (RFN(bwd_needs_queue_checked)(J, I, nb, b, x, y, z, i, v)) rc_push(f, i);
            }
            const int64_t xs = row + b->x0;
            if (nh == 4 && g->flat) {
                /* 2D, 8-connected: N- = lower-left, lower, lower-right, right. */
                RT prev = J[row + b->x1 - 1];
                const RT *dn = J + row + g->sy;
                const RT *dm = I + row + g->sy;
                for (int64_t i = row + b->x1 - 2; i > xs; --i) {
                    const int64_t x = i - row;
                    RT a = dn[x - 1], c = dn[x], e = dn[x + 1];
                    RT v = J[i];
                    v = R_PICK(v, a);
                    v = R_PICK(v, c);
                    v = R_PICK(v, e);
                    v = R_PICK(v, prev);
                    RT m = I[i];
                    v = R_CLIP(v, m);
                    J[i] = v;
                    /* Queue i if it can still raise one of its N- neighbours. */
                    RT pj = J[i + 1], pm = I[i + 1];
                    RT am = dm[x - 1], cm = dm[x], em = dm[x + 1];
                    int need = (R_GT(v, a) & R_GT(am, a)) | (R_GT(v, c) & R_GT(cm, c)) |
                               (R_GT(v, e) & R_GT(em, e)) | (R_GT(v, pj) & R_GT(pm, pj));
                    if (need) rc_push(f, i);
                    prev = v;
                }
            } else {
                for (int64_t i = row + b->x1 - 2; i > xs; --i) {
                    RT v = J[i];
                    for (int k = nh; k < nn; ++k) {
                        RT u = J[i + off[k]];
                        v = R_PICK(v, u);
                    }
                    RT m = I[i];
                    v = R_CLIP(v, m);
                    J[i] = v;
                    for (int k = nh; k < nn; ++k) {
                        int64_t q = i + off[k];
                        RT u = J[q];
                        if (R_GT(v, u) && R_GT(I[q], u)) {
                            rc_push(f, i);
                            break;
                        }
                    }
                }
            }
            {
                int64_t x = b->x0, i = row + x;
                RT v = RFN(scan_px_checked)(J, I, nb, b, x, y, z, i, nh, nn);
                if (RFN(bwd_needs_queue_checked)(J, I, nb, b, x, y, z, i, v)) rc_push(f, i);
            }
        }
    }
}

/* ---- the FIFO phase, restricted to a box ----------------------------------------- */

/*
 * Pop pixels until the queue is empty: each pixel raises every neighbour
 * inside the box that is below it and below its own mask, to
 * min(J(p), I(q)), and queues it. With a spill (sequential only), neighbours
 * outside the box are raised too and queued on their own tile's queue;
 * without one they are left to the border exchange. With an outbox, every
 * popped pixel on the box border is appended to it (every pixel written here
 * is queued and popped, so the outbox lists every border pixel that changed).
 * Stops after @p budget pops. Returns the number of pixels popped.
 */
R_INLINE int64_t RFN(fifo_core)(RT *J, const RT *I, const rc_geom *g, const rc_nbhd *nb,
                                const rc_box *b, rc_fifo *f, rc_vec *outbox, rc_spill *sp,
                                const int nn, const int64_t budget)
{
    int64_t off[26];
    for (int k = 0; k < nn; ++k) off[k] = nb->off[k];
    int64_t pops = 0;
    /* Interior: all neighbours in the box. */
    const int64_t ix0 = b->x0 + 1, ix1 = b->x1 - 1, iy0 = b->y0 + 1, iy1 = b->y1 - 1;
    const int64_t iz0 = g->flat ? b->z0 : b->z0 + 1, iz1 = g->flat ? b->z1 : b->z1 - 1;
    while (f->count > 0 && !f->failed && pops < budget) {
        const int64_t p = rc_pop(f);
        ++pops;
        int64_t x, y, z;
        rc_coords(g, p, &x, &y, &z);
        const RT vp = J[p];
        if (x >= ix0 && x < ix1 && y >= iy0 && y < iy1 && z >= iz0 && z < iz1) {
            /* Branch-free: q is raised iff min(J(p), I(q)) > J(q); every q is
               written (with its own value when not raised) and appended, but
               the queue only grows by the raised ones. */
            if (R_UNLIKELY(f->cap - f->count < nn) && rc_fifo_reserve(f, nn)) break;
            int64_t *const qb = f->buf;
            const int64_t qm = f->cap - 1;
            int64_t tail = f->head + f->count;
            for (int k = 0; k < nn; ++k) {
                const int64_t q = p + off[k];
                const RT u = J[q];
                const RT m = I[q];
                const RT nv = R_CLIP(vp, m);
                const int c = R_GT(nv, u);
                J[q] = c ? nv : u;
                qb[tail & qm] = q;
                tail += c;
            }
            f->count = tail - f->head;
        } else {
            if (outbox) rc_vec_push(outbox, p);
            for (int k = 0; k < nn; ++k) {
                const int64_t nx = x + nb->dx[k], ny = y + nb->dy[k], nz = z + nb->dz[k];
                const int inside = rc_in_box(b, nx, ny, nz);
                if (!inside && !(sp && rc_in_image(g, nx, ny, nz))) continue;
                const int64_t q = p + off[k];
                const RT u = J[q];
                if (R_GT(vp, u)) {
                    const RT m = I[q];
                    if (R_GT(m, u)) {
                        J[q] = R_CLIP(vp, m);
                        if (inside) rc_push(f, q);
                        else rc_spill_push(sp, q, nx, ny, nz);
                    }
                }
            }
        }
    }
    return pops;
}

/* ---- entry points used by the drivers (one switch on the connectivity) ------------ */

/* The two scans over box b (the whole image); the anti-raster scan queues into f. */
static void RFN(scans)(void *Jv, const void *Iv, const rc_geom *g, const rc_nbhd *nb,
                       const rc_box *b, rc_fifo *f)
{
    RT *J = (RT *)Jv;
    const RT *I = (const RT *)Iv;
    switch (nb->n) {
    case 4:
        RFN(scan_fwd_core)(J, I, g, nb, b, 2);
        RFN(scan_bwd_core)(J, I, g, nb, b, f, 4, 2);
        break;
    case 8:
        RFN(scan_fwd_core)(J, I, g, nb, b, 4);
        RFN(scan_bwd_core)(J, I, g, nb, b, f, 8, 4);
        break;
    case 6:
        RFN(scan_fwd_core)(J, I, g, nb, b, 3);
        RFN(scan_bwd_core)(J, I, g, nb, b, f, 6, 3);
        break;
    case 18:
        RFN(scan_fwd_core)(J, I, g, nb, b, 9);
        RFN(scan_bwd_core)(J, I, g, nb, b, f, 18, 9);
        break;
    default:
        RFN(scan_fwd_core)(J, I, g, nb, b, 13);
        RFN(scan_bwd_core)(J, I, g, nb, b, f, 26, 13);
        break;
    }
}

/* FIFO phase of one tile's queue f (box b); raised pixels of other tiles go to sp. */
static int64_t RFN(tile_queue)(void *Jv, const void *Iv, const rc_geom *g, const rc_nbhd *nb,
                               const rc_box *b, rc_fifo *f, rc_spill *sp)
{
    RT *J = (RT *)Jv;
    const RT *I = (const RT *)Iv;
    switch (nb->n) {
    case 4: return RFN(fifo_core)(J, I, g, nb, b, f, NULL, sp, 4, INT64_MAX);
    case 8: return RFN(fifo_core)(J, I, g, nb, b, f, NULL, sp, 8, INT64_MAX);
    case 6: return RFN(fifo_core)(J, I, g, nb, b, f, NULL, sp, 6, INT64_MAX);
    case 18: return RFN(fifo_core)(J, I, g, nb, b, f, NULL, sp, 18, INT64_MAX);
    default: return RFN(fifo_core)(J, I, g, nb, b, f, NULL, sp, 26, INT64_MAX);
    }
}

/* Fast Hybrid restricted to box b: raster, anti-raster, FIFO. Returns pixels popped. */
static int64_t RFN(fh_box)(void *Jv, const void *Iv, const rc_geom *g, const rc_nbhd *nb,
                           const rc_box *b, rc_fifo *f)
{
    RFN(scans)(Jv, Iv, g, nb, b, f);
    return RFN(tile_queue)(Jv, Iv, g, nb, b, f, NULL);
}

/*
 * Messages into box b from its neighbour tiles: each (p, v) says that pixel p,
 * just outside the box, holds v; every neighbour q of p inside the box that is
 * below min(v, I(q)) is raised to it and queued. Then the FIFO phase inside the
 * box, listing in @p outbox every border pixel it pops (all that changed).
 * The FIFO phase stops after @p budget pops (pixels left in f: the caller
 * finishes the box another way). Returns the pixels popped.
 */
static int64_t RFN(msg_box)(void *Jv, const void *Iv, const rc_geom *g, const rc_nbhd *nb,
                            const rc_box *b, rc_fifo *f, const rc_seeds *m, rc_vec *outbox,
                            int64_t budget)
{
    RT *J = (RT *)Jv;
    const RT *I = (const RT *)Iv;
    const RT *mv = (const RT *)m->val;
    for (int64_t j = 0; j < m->n; ++j) {
        const int64_t p = m->idx[j];
        const RT v = mv[j];
        int64_t x, y, z;
        rc_coords(g, p, &x, &y, &z);
        for (int k = 0; k < nb->n; ++k) {
            if (!rc_in_box(b, x + nb->dx[k], y + nb->dy[k], z + nb->dz[k])) continue;
            const int64_t q = p + nb->off[k];
            const RT nv = R_CLIP(v, I[q]);
            if (R_GT(nv, J[q])) {
                J[q] = nv;
                rc_push(f, q);
            }
        }
    }
    switch (nb->n) {
    case 4: return RFN(fifo_core)(J, I, g, nb, b, f, outbox, NULL, 4, budget);
    case 8: return RFN(fifo_core)(J, I, g, nb, b, f, outbox, NULL, 8, budget);
    case 6: return RFN(fifo_core)(J, I, g, nb, b, f, outbox, NULL, 6, budget);
    case 18: return RFN(fifo_core)(J, I, g, nb, b, f, outbox, NULL, 18, budget);
    default: return RFN(fifo_core)(J, I, g, nb, b, f, outbox, NULL, 26, budget);
    }
}

/* Priority of value v: larger = propagates further (v for dilation, -v for erosion). */
static double RFN(key_of)(const void *px)
{
    RT v;
    memcpy(&v, px, sizeof v);
#if RDIL
    return (double)v;
#else
    return -(double)v;
#endif
}

/* Priority of box b before its first run: the strongest value of its clipped
   marker (M clipped by I, or J already clipped when M is NULL). */
static double RFN(box_key)(const void *Jv, const void *Mv, const void *Iv, const rc_geom *g,
                           const rc_box *b)
{
    const RT *I = (const RT *)Iv;
    const RT *src = (const RT *)(Mv ? Mv : Jv);
    RT best = src[b->z0 * g->sz + b->y0 * g->sy + b->x0];
    best = R_CLIP(best, I[b->z0 * g->sz + b->y0 * g->sy + b->x0]);
    for (int64_t z = b->z0; z < b->z1; ++z)
        for (int64_t y = b->y0; y < b->y1; ++y) {
            const int64_t row = z * g->sz + y * g->sy;
            for (int64_t x = b->x0; x < b->x1; ++x) {
                RT v = src[row + x];
                v = R_CLIP(v, I[row + x]);
                best = R_PICK(best, v);
            }
        }
    return RFN(key_of)(&best);
}

/*
 * Messages (p, v) into a tile's contiguous copy LJ/LI of box b (bw x bh
 * pixels per slice) before Fast Hybrid runs there: each neighbour of p inside
 * the box is raised to min(v, its mask) if that is more. No queue: the scans
 * that follow propagate from them.
 */
static void RFN(msg_local)(void *LJv, const void *LIv, const rc_geom *g, const rc_nbhd *nb,
                           const rc_box *b, const rc_seeds *m)
{
    RT *LJ = (RT *)LJv;
    const RT *LI = (const RT *)LIv;
    const RT *mv = (const RT *)m->val;
    const int64_t bw = b->x1 - b->x0, bh = b->y1 - b->y0;
    for (int64_t j = 0; j < m->n; ++j) {
        int64_t x, y, z;
        rc_coords(g, m->idx[j], &x, &y, &z);
        const RT v = mv[j];
        for (int k = 0; k < nb->n; ++k) {
            const int64_t nx = x + nb->dx[k], ny = y + nb->dy[k], nz = z + nb->dz[k];
            if (!rc_in_box(b, nx, ny, nz)) continue;
            const int64_t li = (nx - b->x0) + bw * ((ny - b->y0) + bh * (nz - b->z0));
            const RT nv = R_CLIP(v, LI[li]);
            if (R_GT(nv, LJ[li])) LJ[li] = nv;
        }
    }
}

/* dst = the marker m clipped by the mask i (as IWPP_PW_MIN / IWPP_PW_MAX do), n pixels. */
static void RFN(clip_copy)(void *dstv, const void *mv, const void *iv, int64_t n)
{
    RT *dst = (RT *)dstv;
    const RT *m = (const RT *)mv, *i = (const RT *)iv;
    for (int64_t k = 0; k < n; ++k) dst[k] = R_CLIP(m[k], i[k]);
}

static const rc_kernels RFN(kernels) = {RFN(fh_box),    RFN(msg_box), RFN(scans),
                                        RFN(tile_queue), RFN(clip_copy), RFN(key_of),
                                        RFN(box_key),   RFN(msg_local)};

#undef R_GT
#undef R_PICK
#undef R_CLIP
#undef RFN
#undef R_CAT
#undef R_CAT2
#undef RT
#undef RSUF
#undef RDIL
