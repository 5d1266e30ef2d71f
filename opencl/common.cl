/*
 * common.cl - definitions shared by every program of the OpenCL backend.
 * Built with -DIWPP_T=<uchar|ushort|float> -DIWPP_TK=<1|2|3> (the pixel type
 * and its iwpp_type code). OpenCL C 1.2, 32-bit atomics only.
 */
typedef IWPP_T pix_t;

/*
 * Order-preserving 32-bit keys: key(a) < key(b) exactly when a < b. Integer
 * pixels are zero-extended; floats map their bits so that unsigned order is
 * numeric order (negative floats have all bits flipped, others the sign bit
 * set). Reconstruction works on keys, so every type uses atomic_max on uint.
 */
#if IWPP_TK == 3
inline uint key_of(pix_t v)
{
    uint b = as_uint(v);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
inline pix_t val_of(uint k)
{
    return as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}
#else
inline uint key_of(pix_t v) { return (uint)v; }
inline pix_t val_of(uint k) { return (pix_t)k; }
#endif

/* Coordinates of linear index p in a w x h x d image. */
inline int3 coords_of(uint p, int w, int h)
{
    uint wh = (uint)w * (uint)h;
    uint z = p / wh;
    uint r = p - z * wh;
    uint y = r / (uint)w;
    return (int3)((int)(r - y * (uint)w), (int)y, (int)z);
}

inline int inside(int3 c, int4 o, int w, int h, int d)
{
    int x = c.x + o.x, y = c.y + o.y, z = c.z + o.z;
    return x >= 0 && x < w && y >= 0 && y < h && z >= 0 && z < d;
}
