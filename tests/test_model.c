/* Tests of src/lib/model.c and src/train/model_train.c: Eq. 2 clamping, the f = 1
 * fallback, training CSV parsing, region split, a tiny xgboost training run
 * (few trees, one thread), save/load round trips and load errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>

#include <xgboost/c_api.h>

#include "common/util.h"
#include "lib/model.h"

static char dir[64];

static const char *tmp(const char *name)
{
    static char buf[4][128];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_text(const char *path, const char *text)
{
    assert_int_equal(pd_write_file(path, text, strlen(text)), 0);
}

static void test_target_f(void **state)
{
    (void)state;
    assert_true(fabs(pd_model_target_f(0.5, 1, 3, 2) - 1) < 1e-12);
    assert_true(fabs(pd_model_target_f(0.25, 1, 3, 2) - 2) < 1e-12);
    assert_true(isnan(pd_model_target_f(0, 1, 3, 2)));
    assert_true(isnan(pd_model_target_f(0.5, 3, 3, 2)));
    assert_true(isnan(pd_model_target_f(0.5, 4, 3, 2)));
    assert_true(isnan(pd_model_target_f(0.5, 1, NAN, 2)));
}

static void test_fallback_is_linear(void **state)
{
    (void)state;
    pd_model *m = pd_model_fallback();
    assert_non_null(m);
    assert_true(pd_model_is_fallback(m));
    double feat[PD_NFEATURES] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_true(pd_model_f(m, feat, 0.3) == 1);
    assert_true(fabs(pd_model_predict(m, 1, 3, feat, 0.25) - 2.5) < 1e-12);
    assert_true(pd_model_predict(m, 1, 3, feat, 0) == 3);
    assert_true(pd_model_predict(m, 1, 3, feat, 1) == 1);
    assert_true(pd_model_predict(m, 1, 3, feat, 7) == 1);     /* r clamped */
    assert_true(pd_model_predict(m, 1, 3, feat, -1) == 3);
    assert_true(pd_model_predict(m, 1, 3, feat, NAN) == 3);
    assert_true(pd_model_predict(NULL, 1, 3, NULL, 0.5) == 2); /* NULL model = fallback */
    double r[3] = {0, 0.5, 1}, f[3], t[3];
    assert_int_equal(pd_model_predict_many(m, 2, 4, feat, r, 3, f, t), PD_OK);
    assert_true(t[0] == 4 && t[1] == 3 && t[2] == 2);
    assert_true(f[1] == 1);
    assert_int_equal(pd_model_predict_many(m, 2, 4, feat, NULL, 3, f, t), PD_EINVAL);
    char err[128];
    assert_int_equal(pd_model_save(m, tmp("x.json"), err, sizeof err), PD_EINVAL);
    pd_model_free(m);
    pd_model_free(NULL);
}

static void test_time_table(void **state)
{
    (void)state;
    pd_time_table tt;
    double td[2] = {1, 2}, ts[2] = {3, 2};
    assert_int_equal(pd_time_table_build(&tt, NULL, 2, td, ts, NULL, 5), PD_OK);
    /* f = 1: linear from t_slow to t_dram */
    const double want[5] = {3, 2.5, 2, 1.5, 1};
    for (int k = 0; k < 5; k++)
        assert_true(fabs(tt.t[k] - want[k]) < 1e-12);
    assert_true(fabs(pd_time_table_cb(&tt, 0, 0.125) - 2.75) < 1e-12);
    assert_true(pd_time_table_cb(&tt, 0, 1) == 1);
    assert_true(pd_time_table_cb(&tt, 0, 2) == 1);
    assert_true(pd_time_table_cb(&tt, 0, -1) == 3);
    assert_true(pd_time_table_cb(&tt, 1, 0.7) == 2); /* t_dram == t_slow: flat */
    pd_time_table_free(&tt);
    pd_time_table_free(&tt);
    assert_int_equal(pd_time_table_build(&tt, NULL, 2, td, ts, NULL, 1), PD_EINVAL);
    assert_int_equal(pd_time_table_build(&tt, NULL, 2, NULL, ts, NULL, 5), PD_EINVAL);
    assert_int_equal(pd_time_table_build(&tt, NULL, 0, NULL, NULL, NULL, 5), PD_OK);
    pd_time_table_free(&tt);
}

static void test_data_errors(void **state)
{
    (void)state;
    pd_model_data d;
    char err[512];
    write_text(tmp("bad1.csv"), "region,placement,ipc\nx,p,1\n");
    assert_int_equal(pd_model_data_load(tmp("bad1.csv"), &d, err, sizeof err), PD_EINVAL);
    assert_non_null(strstr(err, "no column 'llc_mpki'"));
    write_text(tmp("bad2.csv"), PD_MODEL_CSV_HEADER "\n"
                                "a,p0,1,2,3,4,5,6,7,8,0.5,1,2,1.5\n"
                                "a,p1,1,2,3,4,5,6,7,8,fast,1,2,1.5\n");
    assert_int_equal(pd_model_data_load(tmp("bad2.csv"), &d, err, sizeof err), PD_EINVAL);
    assert_non_null(strstr(err, "row 3"));
    assert_non_null(strstr(err, "column r"));
    write_text(tmp("bad3.csv"), PD_MODEL_CSV_HEADER "\na,p0,1,2,3,4,5,6,7,8,1.5,1,2,1.5\n");
    assert_int_equal(pd_model_data_load(tmp("bad3.csv"), &d, err, sizeof err), PD_EINVAL);
    assert_non_null(strstr(err, "not a share"));
    write_text(tmp("bad4.csv"), PD_MODEL_CSV_HEADER "\na,p0,x,2,3,4,5,6,7,8,0.5,1,2,1.5\n");
    assert_int_equal(pd_model_data_load(tmp("bad4.csv"), &d, err, sizeof err), PD_EINVAL);
    assert_non_null(strstr(err, "llc_mpki"));
    assert_int_equal(pd_model_data_load(tmp("none.csv"), &d, err, sizeof err), PD_EIO);
    /* missing features are fine (NaN), columns in any order, extras ignored */
    write_text(tmp("ok.csv"), "t_hybrid,extra," PD_MODEL_CSV_HEADER "\n"
                              "1.5,zz,a,p0,,2,3,4,5,6,7,nan,0.5,1,2,1.5\n");
    assert_int_equal(pd_model_data_load(tmp("ok.csv"), &d, err, sizeof err), PD_OK);
    assert_int_equal(d.n, 1);
    assert_true(isnan(d.feat[0][0]) && isnan(d.feat[0][7]));
    assert_true(d.feat[0][1] == 2 && d.r[0] == 0.5 && d.t_slow[0] == 2);
    assert_string_equal(d.region[0], "a");
    pd_model_data_free(&d);
    /* a long cell is read whole, not cut to a different number */
    write_text(tmp("long.csv"), PD_MODEL_CSV_HEADER "\n"
                                "a,p0, NA ,2,3,4,5,6,7,8,"
                                "1.0000000000000000000000000000000000000000000000000000000000000000000000e-1,1,2,1.5\n");
    assert_int_equal(pd_model_data_load(tmp("long.csv"), &d, err, sizeof err), PD_OK);
    assert_true(d.r[0] == 0.1 && isnan(d.feat[0][0]));
    pd_model_data_free(&d);
}

static pd_model_data load_synthetic(int regions)
{
    pd_str s = {0};
    assert_int_equal(pd_model_gen_synthetic(&s, regions, 10, 3), PD_OK);
    assert_int_equal(pd_write_file(tmp("syn.csv"), s.data, s.len), 0);
    pd_str_free(&s);
    pd_model_data d;
    char err[256];
    assert_int_equal(pd_model_data_load(tmp("syn.csv"), &d, err, sizeof err), PD_OK);
    return d;
}

static void test_synthetic_and_split(void **state)
{
    (void)state;
    pd_model_data d = load_synthetic(30);
    assert_int_equal(d.n, 300);
    for (size_t i = 0; i < d.n; i++) {
        /* the mechanistic model keeps every time between the tiers' times (up
         * to 1% noise) and the slow tier slower */
        assert_true(d.r[i] > 0 && d.r[i] <= 1);
        assert_true(d.t_slow[i] > d.t_dram[i]);
        assert_true(d.t_hybrid[i] > 0.95 * d.t_dram[i]);
    }
    unsigned char held[300], held2[300];
    assert_int_equal(pd_model_split_regions(&d, 0.2, 5, held), PD_OK);
    size_t nheld = 0;
    for (size_t i = 0; i < d.n; i++) {
        nheld += held[i];
        for (size_t j = 0; j < d.n; j++)
            if (!strcmp(d.region[i], d.region[j]))
                assert_int_equal(held[i], held[j]); /* a region is on one side */
    }
    assert_int_equal(nheld, 60); /* 6 of 30 regions, 10 rows each */
    assert_int_equal(pd_model_split_regions(&d, 0.2, 5, held2), PD_OK);
    assert_memory_equal(held, held2, d.n);
    assert_int_equal(pd_model_split_regions(&d, 0, 5, held2), PD_OK);
    for (size_t i = 0; i < d.n; i++)
        assert_int_equal(held2[i], 0);
    assert_int_equal(pd_model_split_regions(&d, 1.0, 5, held2), PD_EINVAL);
    assert_int_equal(pd_model_split_regions(&d, NAN, 5, held2), PD_EINVAL);
    pd_str s = {0};
    assert_int_equal(pd_model_gen_synthetic(&s, 0, 10, 1), PD_EINVAL);
    pd_str_free(&s);

    /* the held-out rows written as CSV read back exactly: values, names
     * (one needing quotes), missing features */
    free(d.region[0]);
    d.region[0] = pd_strdup("odd, \"name\"");
    held[0] = 1;
    d.feat[0][3] = NAN;
    assert_int_equal(pd_model_data_write(&s, &d, held), PD_OK);
    write_text(tmp("held.csv"), s.data);
    pd_str_free(&s);
    pd_model_data back;
    char err[256];
    assert_int_equal(pd_model_data_load(tmp("held.csv"), &back, err, sizeof err), PD_OK);
    size_t j = 0;
    for (size_t i = 0; i < d.n; i++) {
        if (!held[i])
            continue;
        assert_true(j < back.n);
        assert_string_equal(back.region[j], d.region[i]);
        assert_string_equal(back.placement[j], d.placement[i]);
        for (int k = 0; k < PD_NFEATURES; k++)
            assert_true(isnan(d.feat[i][k]) ? isnan(back.feat[j][k]) : back.feat[j][k] == d.feat[i][k]);
        assert_true(back.r[j] == d.r[i] && back.t_dram[j] == d.t_dram[i] && back.t_slow[j] == d.t_slow[i] &&
                    back.t_hybrid[j] == d.t_hybrid[i]);
        j++;
    }
    assert_int_equal(back.n, j);
    pd_model_data_free(&back);
    pd_model_data_free(&d);
}

static void test_train_save_load(void **state)
{
    (void)state;
    pd_model_data d = load_synthetic(40);
    unsigned char held[400], train[400];
    assert_int_equal(pd_model_split_regions(&d, 0.25, 1, held), PD_OK);
    for (size_t i = 0; i < d.n; i++)
        train[i] = !held[i];
    char err[512];
    pd_model_train_opts o = {.rounds = 20, .max_depth = 3, .nthread = 1, .seed = 1};
    pd_model *m = pd_model_train(&d, train, &o, err, sizeof err);
    assert_non_null(m);
    assert_false(pd_model_is_fallback(m));
    pd_model_metrics mt, mh;
    assert_int_equal(pd_model_evaluate(m, &d, train, &mt), PD_OK);
    assert_int_equal(mt.rows, 300);
    /* f is not 1 in this data: the model must beat the linear baseline */
    assert_true(mt.mape_t < mt.mape_t_linear);
    assert_true(mt.r2_f > mt.r2_f_linear);
    assert_int_equal(pd_model_evaluate(m, &d, held, &mh), PD_OK);
    assert_int_equal(mh.rows, 100);
    assert_true(isfinite(mh.mape_t) && isfinite(mh.r2_f));

    /* Eq. 2 stays within [T_dram, T_slow] and predict_many agrees */
    double r[11], f[11], t[11];
    for (int k = 0; k <= 10; k++)
        r[k] = k / 10.0;
    for (size_t i = 0; i < d.n; i += 37) {
        assert_int_equal(pd_model_predict_many(m, 1, 3, d.feat[i], r, 11, f, t), PD_OK);
        for (int k = 0; k <= 10; k++) {
            double one = pd_model_predict(m, 1, 3, d.feat[i], r[k]);
            assert_true(one >= 1 && one <= 3);
            assert_true(fabs(one - t[k]) < 1e-12);
            assert_true(fabs(f[k] - pd_model_f(m, d.feat[i], r[k])) < 1e-12);
        }
        assert_true(t[0] == 3);
    }

    /* the tabulated curves are the model's own predictions */
    pd_time_table tt;
    double tds[3] = {1, 2, 0.5}, tss[3] = {3, 2.5, 4};
    assert_int_equal(pd_time_table_build(&tt, m, 3, tds, tss, (const double(*)[PD_NFEATURES])d.feat, 11), PD_OK);
    for (int i = 0; i < 3; i++)
        for (int k = 0; k <= 10; k++)
            assert_true(fabs(tt.t[i * 11 + k] - pd_model_predict(m, tds[i], tss[i], d.feat[i], k / 10.0)) < 1e-12);
    pd_time_table_free(&tt);

    /* save as JSON and UBJSON; reloading predicts the same */
    assert_int_equal(pd_model_save(m, tmp("m.json"), err, sizeof err), PD_OK);
    assert_int_equal(pd_model_save(m, tmp("m.ubj"), err, sizeof err), PD_OK);
    assert_int_equal(pd_model_save(m, "/nonexistent/dir/m.json", err, sizeof err), PD_EIO);
    const char *paths[] = {tmp("m.json"), tmp("m.ubj")};
    for (int p = 0; p < 2; p++) {
        pd_model *m2 = pd_model_load(paths[p], err, sizeof err);
        assert_non_null(m2);
        assert_string_equal(pd_model_source(m2), paths[p]);
        for (size_t i = 0; i < d.n; i += 41)
            assert_true(fabs(pd_model_f(m, d.feat[i], d.r[i]) - pd_model_f(m2, d.feat[i], d.r[i])) < 1e-6);
        pd_model_free(m2);
    }
    /* PADDISER_MODEL names the default */
    setenv("PADDISER_MODEL", tmp("m.json"), 1);
    pd_model *m3 = pd_model_load(NULL, err, sizeof err);
    assert_non_null(m3);
    assert_string_equal(pd_model_source(m3), tmp("m.json"));
    pd_model_free(m3);
    unsetenv("PADDISER_MODEL");
    pd_model_free(m);

    /* too little data */
    unsigned char none[400] = {0};
    none[0] = 1;
    assert_null(pd_model_train(&d, none, &o, err, sizeof err));
    assert_non_null(strstr(err, "too few"));
    pd_model_data_free(&d);
}

static void test_load_errors(void **state)
{
    (void)state;
    char err[512];
    assert_null(pd_model_load(tmp("missing.json"), err, sizeof err));
    assert_non_null(strstr(err, "missing.json"));
    write_text(tmp("garbage.json"), "{\"not\": \"a model\"");
    assert_null(pd_model_load(tmp("garbage.json"), err, sizeof err));
    assert_non_null(strstr(err, "not an xgboost model"));
    /* not JSON/UBJSON: refused before xgboost's legacy reader sees it */
    write_text(tmp("data.csv"), PD_MODEL_CSV_HEADER "\na,p0,1,2,3,4,5,6,7,8,0.5,1,2,1.5\n");
    assert_null(pd_model_load(tmp("data.csv"), err, sizeof err));
    assert_non_null(strstr(err, "want xgboost JSON or UBJSON"));
    assert_null(pd_model_load_buffer("", 0, "empty", err, sizeof err));
    /* a valid booster with 3 inputs is refused */
    float x[6] = {1, 2, 3, 4, 5, 6}, y[2] = {1, 2};
    DMatrixHandle dm;
    BoosterHandle b;
    assert_int_equal(XGDMatrixCreateFromMat(x, 2, 3, NAN, &dm), 0);
    assert_int_equal(XGDMatrixSetFloatInfo(dm, "label", y, 2), 0);
    assert_int_equal(XGBoosterCreate(&dm, 1, &b), 0);
    XGBoosterSetParam(b, "nthread", "1");
    assert_int_equal(XGBoosterUpdateOneIter(b, 0, dm), 0);
    assert_int_equal(XGBoosterSaveModel(b, tmp("three.json")), 0);
    XGBoosterFree(b);
    XGDMatrixFree(dm);
    assert_null(pd_model_load(tmp("three.json"), err, sizeof err));
    assert_non_null(strstr(err, "takes 3 inputs"));
    /* the default never fails: a bad PADDISER_MODEL falls through */
    setenv("PADDISER_MODEL", tmp("garbage.json"), 1);
    pd_model *m = pd_model_load(NULL, err, sizeof err);
    assert_non_null(m);
    unsetenv("PADDISER_MODEL");
    double feat[PD_NFEATURES] = {10, 1, .5, .5, .5, .01, .3, .5};
    double t = pd_model_predict(m, 1, 2, feat, 0.5);
    assert_true(t >= 1 && t <= 2);
    pd_model_free(m);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/pd_model_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

/* Every file the tests wrote, whatever its name (a list of names left
 * held.csv and long.csv behind: a pd_model_ directory in /tmp per run). */
static int teardown(void **state)
{
    (void)state;
    DIR *d = opendir(dir);
    if (d) {
        for (struct dirent *e; (e = readdir(d));)
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
                unlinkat(dirfd(d), e->d_name, 0);
        closedir(d);
    }
    return rmdir(dir) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target_f),
        cmocka_unit_test(test_fallback_is_linear),
        cmocka_unit_test(test_time_table),
        cmocka_unit_test(test_data_errors),
        cmocka_unit_test(test_synthetic_and_split),
        cmocka_unit_test(test_train_save_load),
        cmocka_unit_test(test_load_errors),
    };
    return cmocka_run_group_tests_name("model", tests, setup, teardown);
}
