/*
 * test_oracle.c - the oracle checked against results worked out by hand,
 * so that a wrong oracle cannot silently bless a wrong library.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void expect_array(const double *got, const double *exp, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; ++i) {
        if (got[i] != exp[i]) {
            print_error("FAIL: %s: index %lld: got %g, expected %g\n", what, (long long)i, got[i], exp[i]);
            fail();
        }
    }
}

static void test_neighbors(void **state)
{
    (void)state;
    int off[26][3];
    assert_int_equal(oracle_neighbors(4, off), 4);
    assert_int_equal(oracle_neighbors(8, off), 8);
    assert_int_equal(oracle_neighbors(6, off), 6);
    assert_int_equal(oracle_neighbors(18, off), 18);
    assert_int_equal(oracle_neighbors(26, off), 26);
    assert_int_equal(oracle_neighbors(5, off), 0);
    /* 18: no corner offsets */
    int n = oracle_neighbors(18, off);
    for (int k = 0; k < n; ++k) assert_true(abs(off[k][0]) + abs(off[k][1]) + abs(off[k][2]) <= 2);
}

static void test_reconstruct_1d(void **state)
{
    (void)state;
    odims d = {5, 1, 1};
    double mask[5] = {5, 3, 4, 1, 6};
    double marker[5] = {0, 0, 9, 0, 0}; /* 9 is clipped to 4 */
    double exp[5] = {3, 3, 4, 1, 1};
    oracle_reconstruct(marker, mask, d, 4, 0);
    expect_array(marker, exp, 5, "dilation 1D");

    double marker2[5] = {9, 9, 0, 9, 9}; /* erosion: 0 is raised to the mask 4 */
    double exp2[5] = {5, 4, 4, 4, 6};
    oracle_reconstruct(marker2, mask, d, 4, 1);
    expect_array(marker2, exp2, 5, "erosion 1D");
}

static void test_reconstruct_connectivity(void **state)
{
    (void)state;
    /* a diagonal corridor: 8-connected reaches the end, 4-connected does not */
    odims d = {3, 3, 1};
    double mask[9] = {9, 0, 0, 0, 9, 0, 0, 0, 9};
    double m4[9] = {9, 0, 0, 0, 0, 0, 0, 0, 0};
    double m8[9] = {9, 0, 0, 0, 0, 0, 0, 0, 0};
    oracle_reconstruct(m4, mask, d, 4, 0);
    oracle_reconstruct(m8, mask, d, 8, 0);
    double e4[9] = {9, 0, 0, 0, 0, 0, 0, 0, 0};
    expect_array(m4, e4, 9, "conn 4 diagonal");
    expect_array(m8, mask, 9, "conn 8 diagonal");
    /* 3D: 6 does not cross an edge diagonal, 18 does; a corner needs 26 */
    odims d3 = {2, 2, 2};
    int conns[3] = {6, 18, 26};
    for (int c = 0; c < 3; ++c) {
        double edge[8] = {7, 0, 0, 7, 0, 0, 0, 0};   /* (0,0,0) and (1,1,0) */
        double corner[8] = {7, 0, 0, 0, 0, 0, 0, 7}; /* (0,0,0) and (1,1,1) */
        double mk[8] = {7, 0, 0, 0, 0, 0, 0, 0};
        oracle_reconstruct(mk, edge, d3, conns[c], 0);
        assert_true(mk[3] == (conns[c] >= 18 ? 7 : 0));
        double mk2[8] = {7, 0, 0, 0, 0, 0, 0, 0};
        oracle_reconstruct(mk2, corner, d3, conns[c], 0);
        assert_true(mk2[7] == (conns[c] == 26 ? 7 : 0));
    }
}

static void test_edt(void **state)
{
    (void)state;
    odims d = {3, 1, 1};
    double bin[3] = {0, 1, 1};
    double sp[3] = {2.0, 1.0, 1.0};
    float dist[3];
    oracle_edt(bin, d, sp, dist);
    assert_true(dist[0] == 0.0f && dist[1] == 2.0f && dist[2] == 4.0f);
    /* 3-4-5 */
    odims d2 = {4, 5, 1};
    double b2[20];
    for (int i = 0; i < 20; ++i) b2[i] = 1;
    b2[0] = 0;
    double one[3] = {1, 1, 1};
    float dist2[20];
    oracle_edt(b2, d2, one, dist2);
    assert_true(dist2[3 + 4 * 4] == 5.0f);
    assert_true(oracle_index_distance(0, 3 + 4 * 4, d2, one) == 5.0);
    /* no background: infinity */
    double b3[3] = {1, 1, 1};
    oracle_edt(b3, d, sp, dist);
    assert_true(isinf(dist[0]) && isinf(dist[2]));
}

static void test_regional(void **state)
{
    (void)state;
    odims d = {5, 1, 1};
    double in[5] = {1, 3, 3, 2, 3};
    double out[5];
    double emax[5] = {0, 255, 255, 0, 255};
    double emin[5] = {255, 0, 0, 255, 0};
    oracle_regional_extrema(in, d, 4, 1, out);
    expect_array(out, emax, 5, "maxima");
    oracle_regional_extrema(in, d, 4, 0, out);
    expect_array(out, emin, 5, "minima");
    double c[5] = {4, 4, 4, 4, 4};
    double all[5] = {255, 255, 255, 255, 255};
    oracle_regional_extrema(c, d, 4, 1, out);
    expect_array(out, all, 5, "constant maxima");
    oracle_regional_extrema(c, d, 4, 0, out);
    expect_array(out, all, 5, "constant minima");
    /* a plateau touching a higher pixel only diagonally: max for 4, not for 8 */
    odims d2 = {2, 2, 1};
    double p[4] = {5, 1, 1, 6};
    oracle_regional_extrema(p, d2, 4, 1, out);
    assert_true(out[0] == 255 && out[3] == 255 && out[1] == 0);
    oracle_regional_extrema(p, d2, 8, 1, out);
    assert_true(out[0] == 0 && out[3] == 255);
}

static void test_hextrema(void **state)
{
    (void)state;
    odims d = {5, 1, 1};
    double in[5] = {0, 5, 0, 2, 0};
    double out[5];
    double e2[5] = {0, 3, 0, 0, 0}; /* h = 2: the peak of height 2 (== h) vanishes */
    oracle_hextrema(in, d, IWPP_U8, 2.0, 4, 1, out);
    expect_array(out, e2, 5, "hmax h=2");
    oracle_hextrema(in, d, IWPP_U8, 2.4, 4, 1, out); /* rounds to 2 */
    expect_array(out, e2, 5, "hmax h=2.4");
    double e3[5] = {0, 2, 0, 0, 0};
    oracle_hextrema(in, d, IWPP_U8, 2.6, 4, 1, out); /* rounds to 3 */
    expect_array(out, e3, 5, "hmax h=2.6");
    double zero[5] = {0, 0, 0, 0, 0};
    oracle_hextrema(in, d, IWPP_U8, 300.0, 4, 1, out); /* saturates at 0 */
    expect_array(out, zero, 5, "hmax h=300");
    double inv[5] = {9, 4, 9, 7, 9};
    double emin[5] = {9, 6, 9, 9, 9};
    oracle_hextrema(inv, d, IWPP_U8, 2.0, 4, 0, out);
    expect_array(out, emin, 5, "hmin h=2");
    double sat[5] = {255, 255, 255, 255, 255};
    double in255[5] = {250, 10, 250, 10, 250};
    oracle_hextrema(in255, d, IWPP_U8, 1000.0, 4, 0, out);
    expect_array(out, sat, 5, "hmin saturates");
    double f[3] = {-1.0, 0.5, -1.0};
    double ef[3] = {-1.0, -0.25, -1.0};
    odims d3 = {3, 1, 1};
    oracle_hextrema(f, d3, IWPP_F32, 0.75, 4, 1, out);
    expect_array(out, ef, 3, "hmax f32");
}

static void test_fill_kill(void **state)
{
    (void)state;
    /* 5x5: a ring of 1 around a 0 centre, background 0 outside */
    odims d = {5, 5, 1};
    double in[25] = {0, 0, 0, 0, 0,
                     0, 1, 1, 1, 0,
                     0, 1, 0, 1, 0,
                     0, 1, 1, 1, 0,
                     0, 0, 0, 0, 0};
    double out[25];
    double filled[25];
    memcpy(filled, in, sizeof in);
    filled[12] = 1;
    oracle_fill_holes(in, d, IWPP_U8, 4, out);
    expect_array(out, filled, 25, "fill ring");
    /* a ring with a diagonal gap: 4-connected background is enclosed, 8 leaks */
    double gap[25] = {0, 0, 0, 0, 0,
                      0, 1, 1, 0, 0,
                      0, 1, 0, 1, 0,
                      0, 1, 1, 1, 0,
                      0, 0, 0, 0, 0};
    oracle_fill_holes(gap, d, IWPP_U8, 4, out);
    assert_true(out[12] == 1);
    oracle_fill_holes(gap, d, IWPP_U8, 8, out);
    assert_true(out[12] == 0);
    /* kill borders: an object touching the border goes, an inner one stays */
    double kb[25] = {7, 7, 0, 0, 0,
                     0, 0, 0, 0, 0,
                     0, 0, 5, 0, 0,
                     0, 0, 0, 0, 0,
                     0, 0, 0, 0, 0};
    oracle_kill_borders(kb, d, IWPP_U8, 8, out);
    for (int i = 0; i < 25; ++i) assert_true(out[i] == (i == 12 ? 5 : 0));
    /* gray fill: a basin of 2 inside a rim of 6 rises to 6; outside 1 */
    double g[9] = {6, 6, 6, 6, 2, 6, 6, 6, 6};
    odims d3 = {3, 3, 1};
    oracle_fill_holes(g, d3, IWPP_U16, 4, out);
    assert_true(out[4] == 6);
}

static void test_open_close(void **state)
{
    (void)state;
    /* a 1-pixel spike on a plateau is removed by an opening of radius 1; the
     * plateau (3 wide) survives */
    odims d = {7, 1, 1};
    double in[7] = {0, 4, 4, 4, 0, 9, 0};
    double out[7];
    double e[7] = {0, 4, 4, 4, 0, 0, 0};
    oracle_open_close(in, d, 1, 4, 1, out);
    expect_array(out, e, 7, "opening r=1");
    oracle_open_close(in, d, 0, 4, 1, out);
    expect_array(out, in, 7, "opening r=0");
    double in2[7] = {9, 1, 9, 9, 9, 9, 9};
    double e2[7] = {9, 9, 9, 9, 9, 9, 9};
    oracle_open_close(in2, d, 1, 4, 0, out);
    expect_array(out, e2, 7, "closing r=1");
}

static void test_generators(void **state)
{
    (void)state;
    /* spiral and maze: the propagation path really covers a large share */
    int conns[2] = {4, 8};
    for (int c = 0; c < 2; ++c) {
        odims d = {63, 63, 1};
        double *mask = vol_alloc(d), *mk = vol_alloc(d);
        gen_spiral(d, mask);
        int64_t n = odims_count(d), on = 0;
        for (int64_t i = 0; i < n; ++i) on += mask[i] != 0;
        mk[0] = 1.0;
        int64_t sweeps = oracle_reconstruct(mk, mask, d, conns[c], 0);
        int64_t reached = 0;
        for (int64_t i = 0; i < n; ++i) reached += mk[i] != 0;
        print_message("spiral 63x63 conn %d: %lld corridor pixels, %lld sweeps\n", conns[c],
                      (long long)on, (long long)sweeps);
        assert_true(on > n * 4 / 10);
        assert_true(reached == on);
        assert_true(sweeps > on * 9 / 10);
        trng r;
        trng_seed(&r, 7);
        gen_maze(&r, d, mask);
        memset(mk, 0, (size_t)n * sizeof(double));
        mk[0] = 1.0;
        on = 0;
        for (int64_t i = 0; i < n; ++i) on += mask[i] != 0;
        sweeps = oracle_reconstruct(mk, mask, d, conns[c], 0);
        reached = 0;
        for (int64_t i = 0; i < n; ++i) reached += mk[i] != 0;
        print_message("maze 63x63 conn %d: %lld corridor pixels, %lld sweeps\n", conns[c],
                      (long long)on, (long long)sweeps);
        assert_true(reached == on);
        assert_true(sweeps > 100);
        free(mask);
        free(mk);
    }
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_neighbors),  cmocka_unit_test(test_reconstruct_1d),
        cmocka_unit_test(test_reconstruct_connectivity), cmocka_unit_test(test_edt),
        cmocka_unit_test(test_regional),   cmocka_unit_test(test_hextrema),
        cmocka_unit_test(test_fill_kill),  cmocka_unit_test(test_open_close),
        cmocka_unit_test(test_generators),
    };
    harness_exit(cmocka_run_group_tests_name("oracle", tests, NULL, NULL));
}
