/*
 * clcache_check.c - one process of test_clcache.sh: reconstruction and
 * opening by reconstruction on OpenCL (u8 and f32), compared with the CPU.
 * Exit 0 when equal, 1 when not, 77 when there is no OpenCL device.
 */
#include <iwpp.h>

#include <stdio.h>
#include <string.h>

enum { W = 67, H = 45, N = W * H };

static int run(iwpp_backend be, iwpp_type t, void *mk, const void *ms, void *open_out)
{
    iwpp_context *ctx = NULL;
    if (iwpp_context_create(&ctx, be) != IWPP_OK) {
        iwpp_context_destroy(ctx);
        return 77;
    }
    iwpp_image a = iwpp_image_2d(mk, t, W, H), b = iwpp_image_2d((void *)ms, t, W, H);
    iwpp_image o = iwpp_image_2d(open_out, t, W, H);
    int bad = iwpp_reconstruct(ctx, &a, &b, 8, IWPP_BY_DILATION) != IWPP_OK ||
              iwpp_opening_by_reconstruction(ctx, &b, 2, 4, &o) != IWPP_OK;
    if (bad) fprintf(stderr, "clcache_check: %s\n", iwpp_error_message(ctx));
    iwpp_context_destroy(ctx);
    return bad;
}

int main(void)
{
    static unsigned char m8[N], k8[2][N], o8[2][N];
    static float mf[N], kf[2][N], of[2][N];
    for (int i = 0; i < N; ++i) {
        int x = i % W, y = i / W;
        m8[i] = (unsigned char)(((x / 6 + y / 4) % 5) * 50 + (i * 7919) % 13);
        k8[0][i] = k8[1][i] = m8[i] > 40 ? (unsigned char)(m8[i] - 40) : 0;
        mf[i] = (float)m8[i] * 0.5f;
        kf[0][i] = kf[1][i] = mf[i] - 7.25f;
    }
    int st = run(IWPP_BACKEND_OPENCL, IWPP_U8, k8[0], m8, o8[0]);
    if (st == 77) {
        printf("clcache_check: no OpenCL device: skipped\n");
        return 77;
    }
    st |= run(IWPP_BACKEND_OPENCL, IWPP_F32, kf[0], mf, of[0]);
    st |= run(IWPP_BACKEND_CPU, IWPP_U8, k8[1], m8, o8[1]);
    st |= run(IWPP_BACKEND_CPU, IWPP_F32, kf[1], mf, of[1]);
    if (st) return 1;
    if (memcmp(k8[0], k8[1], N) || memcmp(o8[0], o8[1], N) || memcmp(kf[0], kf[1], sizeof kf[0]) ||
        memcmp(of[0], of[1], sizeof of[0])) {
        printf("clcache_check: OpenCL differs from the CPU\n");
        return 1;
    }
    printf("clcache_check: OpenCL equals the CPU\n");
    return 0;
}
