/* Tests of the native tree evaluation (src/lib/model_forest.c,
 * model_ubjson.c, model.c): split semantics on a hand-made model, equality
 * with xgboost's own predictions (shipped default model, embedded copy,
 * freshly trained models, UBJSON), loading after fork() and in exit
 * handlers, and rejection of malformed models. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>
#include <xgboost/c_api.h>

#include "common/util.h"
#include "lib/model.h"
#include "lib/model_internal.h"

static char dir[64];

static const char *tmp(const char *name)
{
    static char buf[4][128];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* Tree 0: r < 0.5 ? 0.25 : (x0 < 2 ? -0.125 : 0.0625), missing r goes left,
 * missing x0 goes right; tree 1: a single leaf 0.01; base_score 0.5. */
static const char *tiny_model =
    "{\"learner\":{\"attributes\":{},\"feature_names\":[],\"feature_types\":[],"
    "\"gradient_booster\":{\"model\":{\"gbtree_model_param\":{\"num_parallel_tree\":\"1\",\"num_trees\":\"2\","
    "\"size_leaf_vector\":\"0\"},\"tree_info\":[0,0],\"trees\":["
    "{\"base_weights\":[0.0,0.0,0.0,0.0,0.0],\"categories\":[],\"categories_nodes\":[],\"categories_segments\":[],"
    "\"categories_sizes\":[],\"default_left\":[1,0,0,0,0],\"id\":0,\"left_children\":[1,-1,3,-1,-1],"
    "\"loss_changes\":[0.0,0.0,0.0,0.0,0.0],\"parents\":[2147483647,0,0,2,2],\"right_children\":[2,-1,4,-1,-1],"
    "\"split_conditions\":[0.5,0.25,2.0,-0.125,0.0625],\"split_indices\":[8,0,0,0,0],"
    "\"split_type\":[0,0,0,0,0],\"sum_hessian\":[1.0,1.0,1.0,1.0,1.0],"
    "\"tree_param\":{\"num_deleted\":\"0\",\"num_feature\":\"9\",\"num_nodes\":\"5\",\"size_leaf_vector\":\"0\"}},"
    "{\"base_weights\":[0.0],\"categories\":[],\"categories_nodes\":[],\"categories_segments\":[],"
    "\"categories_sizes\":[],\"default_left\":[0],\"id\":1,\"left_children\":[-1],\"loss_changes\":[0.0],"
    "\"parents\":[2147483647],\"right_children\":[-1],\"split_conditions\":[0.01],\"split_indices\":[0],"
    "\"split_type\":[0],\"sum_hessian\":[1.0],"
    "\"tree_param\":{\"num_deleted\":\"0\",\"num_feature\":\"9\",\"num_nodes\":\"1\",\"size_leaf_vector\":\"0\"}}"
    "]},\"name\":\"gbtree\"},"
    "\"learner_model_param\":{\"base_score\":\"5E-1\",\"boost_from_average\":\"1\",\"num_class\":\"0\","
    "\"num_feature\":\"9\",\"num_target\":\"1\"},"
    "\"objective\":{\"name\":\"reg:squarederror\",\"reg_loss_param\":{\"scale_pos_weight\":\"1\"}}},"
    "\"version\":[1,7,4]}";

static void set_row(float *row, float x0, float r)
{
    for (int k = 0; k < PD_MODEL_NINPUTS; k++)
        row[k] = 1;
    row[0] = x0;
    row[PD_NFEATURES] = r;
}

/* |a - b| <= 1e-5 relative; counts exact matches. */
static size_t exact_matches;
static void assert_close(float native, float ref)
{
    double tol = 1e-5 * fmax(1.0, fabs((double)ref));
    if (!(fabs((double)native - (double)ref) <= tol))
        fail_msg("native %.9g vs xgboost %.9g", native, ref);
    exact_matches += native == ref;
}

/* Native and xgboost predictions for n rows, compared; returns the number
 * of exact matches. */
static size_t compare_with_xgboost(const pd_model *m, const float *rows, size_t n)
{
    char err[256];
    void *b = pd_model_xgb_booster(m, err, sizeof err);
    if (!b)
        fail_msg("%s", err);
    float *ref = malloc(n * sizeof *ref);
    double *nat = malloc(n * sizeof *nat);
    assert_non_null(ref);
    assert_non_null(nat);
    assert_int_equal(pd_model_xgb_predict(b, rows, n, ref), PD_OK);
    assert_int_equal(pd_model_raw_predict(m, rows, n, nat), PD_OK);
    exact_matches = 0;
    for (size_t i = 0; i < n; i++)
        assert_close((float)nat[i], ref[i]);
    XGBoosterFree(b);
    free(ref);
    free(nat);
    return exact_matches;
}

static void test_split_semantics(void **state)
{
    (void)state;
    char err[256];
    pd_model *m = pd_model_load_buffer(tiny_model, strlen(tiny_model), "tiny", err, sizeof err);
    if (!m)
        fail_msg("%s", err);
    assert_false(pd_model_is_fallback(m));
    float rows[6 * PD_MODEL_NINPUTS];
    set_row(rows + 0 * PD_MODEL_NINPUTS, 1, 0.3f);  /* r < 0.5: left */
    set_row(rows + 1 * PD_MODEL_NINPUTS, 1, 0.5f);  /* r == 0.5 goes right, x0 < 2 */
    set_row(rows + 2 * PD_MODEL_NINPUTS, 2, 0.5f);  /* x0 == 2 goes right */
    set_row(rows + 3 * PD_MODEL_NINPUTS, NAN, 0.7f); /* missing x0: default right */
    set_row(rows + 4 * PD_MODEL_NINPUTS, 1, NAN);   /* missing r: default left */
    set_row(rows + 5 * PD_MODEL_NINPUTS, nextafterf(2, 0), 0.6f);
    double f[6];
    assert_int_equal(pd_model_raw_predict(m, rows, 6, f), PD_OK);
    const float want[6] = {0.5f + 0.25f + 0.01f, 0.5f - 0.125f + 0.01f, 0.5f + 0.0625f + 0.01f,
                           0.5f + 0.0625f + 0.01f, 0.5f + 0.25f + 0.01f, 0.5f - 0.125f + 0.01f};
    for (int i = 0; i < 6; i++)
        assert_true((float)f[i] == want[i]);
    /* xgboost reads the hand-made model the same way */
    assert_int_equal(compare_with_xgboost(m, rows, 6), 6);
    /* through the public API: features NULL = all missing, r clamped */
    assert_true(fabs(pd_model_f(m, NULL, 0.3) - want[0]) < 1e-7);
    double feat[PD_NFEATURES] = {2, 1, 1, 1, 1, 1, 1, 1};
    assert_true(fabs(pd_model_f(m, feat, 0.5) - want[2]) < 1e-7);
    pd_model_free(m);
}

static uint64_t rng = 0x12345;
static double uni(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / (double)(1ULL << 53);
}

/* Random inputs: plausible values, 15% missing, extremes, and values equal
 * to (or one ulp around) the model's own split conditions. */
static float *random_rows(const pd_model *m, size_t n)
{
    float *rows = malloc(n * PD_MODEL_NINPUTS * sizeof *rows);
    assert_non_null(rows);
    const pd_forest *fo = &m->forest;
    for (size_t i = 0; i < n; i++) {
        float *x = rows + i * PD_MODEL_NINPUTS;
        for (int k = 0; k < PD_MODEL_NINPUTS; k++) {
            double u = uni();
            if (u < 0.15 && k < PD_NFEATURES)
                x[k] = NAN;
            else if (u < 0.5 && fo->nnodes > 0) {
                const pd_tree_node *nd = &fo->nodes[(size_t)(uni() * (double)fo->nnodes)];
                float v = !(nd->feature & PD_NODE_LEAF) ? nd->value : (float)uni();
                int d = (int)(uni() * 3);
                x[k] = d == 0 ? v : d == 1 ? nextafterf(v, -INFINITY) : nextafterf(v, INFINITY);
            } else if (u < 0.53)
                x[k] = (float)(uni() * 1e6 - 5e5);
            else
                x[k] = k == PD_NFEATURES ? (float)uni() : (float)(uni() * (k == 0 ? 40 : 1.5));
        }
        if (i % 97 == 0) /* no features at all */
            for (int k = 0; k < PD_NFEATURES; k++)
                x[k] = NAN;
    }
    return rows;
}

static void test_default_model_matches_xgboost(void **state)
{
    (void)state;
    char err[512];
    pd_model *file = pd_model_load(PD_SOURCE_DIR "/models/default_model.json", err, sizeof err);
    if (!file)
        fail_msg("%s", err);
    assert_int_equal(file->forest.ntrees, 100);
    assert_true(pd_model_default_size > 0);
    pd_model *emb = pd_model_load_buffer(pd_model_default_data, pd_model_default_size, "embedded", err, sizeof err);
    if (!emb)
        fail_msg("%s", err);
    const size_t n = 4000;
    float *rows = random_rows(file, n);
    size_t exact = compare_with_xgboost(file, rows, n);
    print_message("default model: %zu of %zu predictions bit-identical to xgboost's\n", exact, n);
    compare_with_xgboost(emb, rows, n);
    free(rows);
    pd_model_free(file);
    pd_model_free(emb);
}

static pd_model_data synthetic_with_missing(int regions, unsigned seed)
{
    pd_str s = {0};
    assert_int_equal(pd_model_gen_synthetic(&s, regions, 10, seed), PD_OK);
    assert_int_equal(pd_write_file(tmp("syn.csv"), s.data, s.len), 0);
    pd_str_free(&s);
    pd_model_data d;
    char err[256];
    assert_int_equal(pd_model_data_load(tmp("syn.csv"), &d, err, sizeof err), PD_OK);
    /* missing features, so that trees learn default directions */
    for (size_t i = 0; i < d.n; i++)
        for (int k = 0; k < PD_NFEATURES; k++)
            if (uni() < 0.25)
                d.feat[i][k] = NAN;
    return d;
}

static void test_trained_models_match_xgboost(void **state)
{
    (void)state;
    pd_model_data d = synthetic_with_missing(30, 11);
    const pd_model_train_opts opts[] = {
        {.rounds = 5, .max_depth = 2, .nthread = 1, .seed = 1},
        {.rounds = 25, .max_depth = 6, .nthread = 1, .seed = 2},
        {.rounds = 12, .max_depth = 4, .eta = 0.3, .nthread = 1, .seed = 3},
    };
    char err[512];
    for (size_t c = 0; c < PD_ARRAY_LEN(opts); c++) {
        pd_model *m = pd_model_train(&d, NULL, &opts[c], err, sizeof err);
        if (!m)
            fail_msg("%s", err);
        assert_int_equal(m->forest.ntrees, (size_t)opts[c].rounds);
        int defaults_left = 0;
        for (size_t k = 0; k < m->forest.nnodes; k++)
            defaults_left += !(m->forest.nodes[k].feature & PD_NODE_LEAF) &&
                             (m->forest.nodes[k].feature & PD_NODE_DEFAULT_LEFT);
        assert_true(defaults_left > 0); /* both directions are exercised */
        float *rows = random_rows(m, 1500);
        compare_with_xgboost(m, rows, 1500);
        /* the binary format, decoded natively, gives the same trees */
        assert_int_equal(pd_model_save(m, tmp("t.ubj"), err, sizeof err), PD_OK);
        pd_model *u = pd_model_load(tmp("t.ubj"), err, sizeof err);
        if (!u)
            fail_msg("%s", err);
        compare_with_xgboost(u, rows, 1500);
        double a[64], b[64];
        assert_int_equal(pd_model_raw_predict(m, rows, 64, a), PD_OK);
        assert_int_equal(pd_model_raw_predict(u, rows, 64, b), PD_OK);
        assert_memory_equal(a, b, sizeof a);
        pd_model_free(u);
        free(rows);
        pd_model_free(m);
    }
    pd_model_data_free(&d);
}

/* A loaded model is read-only: threads predicting at once get the serial
 * results (run under ASan/UBSan by make check-asan; no lock involved). */
typedef struct {
    const pd_model *m;
    const float *rows;
    size_t n;
    double *out;
} predict_job;

static void *predict_thread(void *arg)
{
    predict_job *j = arg;
    for (int rep = 0; rep < 5; rep++)
        pd_model_raw_predict(j->m, j->rows, j->n, j->out);
    return NULL;
}

static void test_concurrent_predictions(void **state)
{
    (void)state;
    char err[512];
    pd_model *m = pd_model_load(PD_SOURCE_DIR "/models/default_model.json", err, sizeof err);
    if (!m)
        fail_msg("%s", err);
    const size_t n = 500;
    float *rows = random_rows(m, n);
    double *serial = malloc(n * sizeof *serial), *par = malloc(4 * n * sizeof *par);
    assert_non_null(serial);
    assert_non_null(par);
    assert_int_equal(pd_model_raw_predict(m, rows, n, serial), PD_OK);
    pthread_t th[4];
    predict_job jobs[4];
    for (int t = 0; t < 4; t++) {
        jobs[t] = (predict_job){m, rows, n, par + (size_t)t * n};
        assert_int_equal(pthread_create(&th[t], NULL, predict_thread, &jobs[t]), 0);
    }
    for (int t = 0; t < 4; t++)
        assert_int_equal(pthread_join(th[t], NULL), 0);
    for (int t = 0; t < 4; t++)
        assert_memory_equal(par + (size_t)t * n, serial, n * sizeof *serial);
    free(serial);
    free(par);
    free(rows);
    pd_model_free(m);
}

/* A child process after fork(): xgboost's OpenMP pool was running in the
 * parent (training with 2 threads); loading and predicting in the child must
 * not touch it. alarm() turns a hang into a failure. */
static void test_fork_child_loads_and_predicts(void **state)
{
    (void)state;
    pd_model_data d = synthetic_with_missing(10, 5);
    pd_model_train_opts o = {.rounds = 5, .max_depth = 3, .nthread = 2, .seed = 1};
    char err[512];
    pd_model *trained = pd_model_train(&d, NULL, &o, err, sizeof err);
    if (!trained)
        fail_msg("%s", err);
    assert_int_equal(pd_model_save(trained, tmp("fork.json"), err, sizeof err), PD_OK);
    double feat[PD_NFEATURES] = {10, 1, .5, .5, .5, .01, .3, .5};
    double want_default = pd_model_f(NULL, feat, 0.5); /* fallback: 1 */
    double want = pd_model_f(trained, feat, 0.4);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20);
        char e[512];
        pd_model *m = pd_model_load(NULL, e, sizeof e); /* default: JSON file */
        pd_model *m2 = pd_model_load(tmp("fork.json"), e, sizeof e);
        int ok = m && !pd_model_is_fallback(m) && m2 && pd_model_f(m2, feat, 0.4) == want &&
                 pd_model_f(trained, feat, 0.4) == want && want_default == 1;
        double t = pd_model_predict(m, 1, 2, feat, 0.5);
        ok = ok && t >= 1 && t <= 2;
        pd_model_free(m);
        pd_model_free(m2);
        _exit(ok ? 0 : 3);
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    if (WIFSIGNALED(st))
        fail_msg("child killed by signal %d%s", WTERMSIG(st), WTERMSIG(st) == SIGALRM ? " (hung)" : "");
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    pd_model_free(trained);
    pd_model_data_free(&d);
}

/* Exit handlers: a model loaded before exit is freed in a handler, another
 * is loaded, used and freed inside one (the runtime's pd_finalize at exit). */
static pd_model *exit_model;
static int exit_fd = -1;
static void at_exit_free(void)
{
    double f = pd_model_f(exit_model, NULL, 0.5);
    pd_model_free(exit_model);
    char e[512];
    pd_model *m = pd_model_load(NULL, e, sizeof e);
    double f2 = pd_model_f(m, NULL, 0.5);
    int ok = m && !pd_model_is_fallback(m) && f == f2;
    pd_model_free(m);
    if (write(exit_fd, ok ? "ok" : "no", 2) != 2)
        _exit(5);
}

static void test_load_free_in_exit_handler(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(20);
        close(p[0]);
        exit_fd = p[1];
        char e[512];
        exit_model = pd_model_load(NULL, e, sizeof e);
        /* xgboost is used in this process too (training), as in `paddiser` */
        pd_model_data d = synthetic_with_missing(5, 2);
        pd_model_train_opts o = {.rounds = 2, .max_depth = 2, .nthread = 1, .seed = 1};
        pd_model *t = pd_model_train(&d, NULL, &o, e, sizeof e);
        pd_model_data_free(&d);
        pd_model_free(t);
        if (!exit_model || !t || atexit(at_exit_free) != 0)
            _exit(3);
        exit(0);
    }
    close(p[1]);
    char buf[3] = {0};
    ssize_t got = read(p[0], buf, 2);
    close(p[0]);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(got, 2);
    assert_string_equal(buf, "ok");
}

/* ---- malformed models ---------------------------------------------------- */

typedef void (*mutation)(json_t *doc);

static json_t *tree0(json_t *doc)
{
    json_t *trees = json_object_get(
        json_object_get(json_object_get(json_object_get(doc, "learner"), "gradient_booster"), "model"), "trees");
    return json_array_get(trees, 0);
}

static void no_learner(json_t *d) { json_object_del(d, "learner"); }
static void no_model_param(json_t *d) { json_object_del(json_object_get(d, "learner"), "learner_model_param"); }
static void no_trees(json_t *d)
{
    json_object_del(json_object_get(json_object_get(json_object_get(d, "learner"), "gradient_booster"), "model"),
                    "trees");
}
static void no_left(json_t *d) { json_object_del(tree0(d), "left_children"); }
static void no_tree_param(json_t *d) { json_object_del(tree0(d), "tree_param"); }
static void short_right(json_t *d) { json_array_remove(json_object_get(tree0(d), "right_children"), 4); }
static void child_out_of_range(json_t *d) { json_array_set_new(json_object_get(tree0(d), "left_children"), 2, json_integer(99)); }
static void child_negative(json_t *d) { json_array_set_new(json_object_get(tree0(d), "right_children"), 0, json_integer(-7)); }
static void child_is_root(json_t *d) { json_array_set_new(json_object_get(tree0(d), "left_children"), 2, json_integer(0)); }
static void half_leaf(json_t *d) { json_array_set_new(json_object_get(tree0(d), "left_children"), 3, json_integer(1)); }
static void cycle(json_t *d)
{
    /* node 3 becomes internal with children 1 and 2: 2 is its own ancestor */
    json_array_set_new(json_object_get(tree0(d), "left_children"), 3, json_integer(1));
    json_array_set_new(json_object_get(tree0(d), "right_children"), 3, json_integer(2));
}
static void shared_child(json_t *d) { json_array_set_new(json_object_get(tree0(d), "right_children"), 2, json_integer(1)); }
static void split_index_range(json_t *d) { json_array_set_new(json_object_get(tree0(d), "split_indices"), 2, json_integer(9)); }
static void cond_string(json_t *d) { json_array_set_new(json_object_get(tree0(d), "split_conditions"), 0, json_string("x")); }
static void left_is_real(json_t *d) { json_array_set_new(json_object_get(tree0(d), "left_children"), 0, json_real(1.5)); }
static void categorical(json_t *d) { json_array_set_new(json_object_get(tree0(d), "split_type"), 0, json_integer(1)); }
static void bad_default_left(json_t *d) { json_array_set_new(json_object_get(tree0(d), "default_left"), 1, json_integer(7)); }
static void num_nodes_zero(json_t *d) { json_object_set_new(json_object_get(tree0(d), "tree_param"), "num_nodes", json_string("0")); }
static void num_nodes_text(json_t *d) { json_object_set_new(json_object_get(tree0(d), "tree_param"), "num_nodes", json_string("five")); }
static void objective_logistic(json_t *d)
{
    json_object_set_new(json_object_get(json_object_get(d, "learner"), "objective"), "name",
                        json_string("binary:logistic"));
}
static void booster_dart(json_t *d)
{
    json_object_set_new(json_object_get(json_object_get(d, "learner"), "gradient_booster"), "name", json_string("dart"));
}
static void three_inputs(json_t *d)
{
    json_object_set_new(json_object_get(json_object_get(d, "learner"), "learner_model_param"), "num_feature",
                        json_string("3"));
}
static void base_score_text(json_t *d)
{
    json_object_set_new(json_object_get(json_object_get(d, "learner"), "learner_model_param"), "base_score",
                        json_string("half"));
}
static void trees_not_array(json_t *d)
{
    json_object_set_new(json_object_get(json_object_get(json_object_get(d, "learner"), "gradient_booster"), "model"),
                        "trees", json_object());
}
static void tree_count_mismatch(json_t *d)
{
    json_object_set_new(json_object_get(json_object_get(json_object_get(json_object_get(d, "learner"), "gradient_booster"),
                                                        "model"),
                                        "gbtree_model_param"),
                        "num_trees", json_string("3"));
}
static void group_one(json_t *d)
{
    json_t *info = json_object_get(
        json_object_get(json_object_get(json_object_get(d, "learner"), "gradient_booster"), "model"), "tree_info");
    json_array_set_new(info, 1, json_integer(1));
}

/* Tree 0 as a chain of `depth` splits (each right child a leaf). */
static void make_chain(json_t *d, int depth)
{
    json_t *t = tree0(d);
    int n = 2 * depth + 1;
    json_t *l = json_array(), *r = json_array(), *si = json_array(), *sc = json_array(), *dl = json_array(),
           *st = json_array();
    for (int i = 0; i < n; i++) {
        int internal = i % 2 == 0 && i < n - 1;
        json_array_append_new(l, json_integer(internal ? i + 2 : -1));
        json_array_append_new(r, json_integer(internal ? i + 1 : -1));
        json_array_append_new(si, json_integer(0));
        json_array_append_new(sc, json_real(internal ? 1000.0 - i : 0.001));
        json_array_append_new(dl, json_integer(1));
        json_array_append_new(st, json_integer(0));
    }
    json_object_set_new(t, "left_children", l);
    json_object_set_new(t, "right_children", r);
    json_object_set_new(t, "split_indices", si);
    json_object_set_new(t, "split_conditions", sc);
    json_object_set_new(t, "default_left", dl);
    json_object_set_new(t, "split_type", st);
    char num[16];
    snprintf(num, sizeof num, "%d", n);
    json_object_set_new(json_object_get(t, "tree_param"), "num_nodes", json_string(num));
}
static void too_deep(json_t *d) { make_chain(d, PD_FOREST_MAX_DEPTH + 1); }

static void test_malformed_models_rejected(void **state)
{
    (void)state;
    const struct {
        mutation fn;
        const char *want;
    } cases[] = {
        {no_learner, "missing key 'learner'"},
        {no_model_param, "missing key 'learner.learner_model_param'"},
        {no_trees, "missing key 'learner.gradient_booster.model.trees'"},
        {no_left, "missing key 'trees[0].left_children'"},
        {no_tree_param, "missing key 'trees[0].tree_param'"},
        {short_right, "trees[0].right_children has 4 entries, want num_nodes = 5"},
        {child_out_of_range, "node 2: child index out of range (left 99"},
        {child_negative, "node 0: child index out of range"},
        {child_is_root, "node 2: child index out of range (left 0"},
        {half_leaf, "node 3: child index out of range"},
        {cycle, "reached twice"},
        {shared_child, "node 1 is reached twice"},
        {split_index_range, "split feature 9 out of range"},
        {cond_string, "split_conditions entry is not a finite number"},
        {left_is_real, "must be integers"},
        {categorical, "categorical splits are not supported"},
        {bad_default_left, "default_left is 7"},
        {num_nodes_zero, "num_nodes = 0"},
        {num_nodes_text, "'trees[0].tree_param.num_nodes' is not a number"},
        {objective_logistic, "objective 'binary:logistic' is not supported"},
        {booster_dart, "booster 'dart' is not supported"},
        {three_inputs, "model takes 3 inputs, want 9"},
        {base_score_text, "base_score' is not a number"},
        {trees_not_array, "'learner.gradient_booster.model.trees' is an object, want an array"},
        {tree_count_mismatch, "num_trees = 3 but 2 trees"},
        {group_one, "output group"},
        {too_deep, "deeper than 256 levels"},
    };
    json_error_t je;
    json_t *base = json_loads(tiny_model, 0, &je);
    assert_non_null(base);
    char err[512];
    for (size_t c = 0; c < PD_ARRAY_LEN(cases); c++) {
        json_t *doc = json_deep_copy(base);
        cases[c].fn(doc);
        char *text = json_dumps(doc, JSON_COMPACT);
        assert_non_null(text);
        err[0] = '\0';
        pd_model *m = pd_model_load_buffer(text, strlen(text), "bad.json", err, sizeof err);
        if (m || !strstr(err, cases[c].want) || !strstr(err, "bad.json: invalid xgboost model: "))
            fail_msg("case %zu: want '%s', got %s: '%s'", c, cases[c].want, m ? "a model" : "error", err);
        free(text);
        json_decref(doc);
    }
    /* a chain at the depth bound is fine, and evaluates */
    json_t *doc = json_deep_copy(base);
    make_chain(doc, PD_FOREST_MAX_DEPTH);
    char *text = json_dumps(doc, JSON_COMPACT);
    pd_model *m = pd_model_load_buffer(text, strlen(text), "chain", err, sizeof err);
    if (!m)
        fail_msg("%s", err);
    assert_int_equal(m->forest.max_depth, PD_FOREST_MAX_DEPTH);
    float row[PD_MODEL_NINPUTS] = {0};
    double f;
    assert_int_equal(pd_model_raw_predict(m, row, 1, &f), PD_OK);
    assert_true(fabs(f - (0.5 + 0.001 + 0.01)) < 1e-6); /* 0 < every split: left to the end */
    pd_model_free(m);
    free(text);
    json_decref(doc);
    json_decref(base);
    /* not JSON at all, or JSON that is not an object */
    assert_null(pd_model_load_buffer("{\"learner\": [1, 2", 17, "cut.json", err, sizeof err));
    assert_non_null(strstr(err, "cut.json: not an xgboost model (JSON: "));
    assert_null(pd_model_load_buffer("[1]", 3, "arr.json", err, sizeof err));
    assert_non_null(strstr(err, "want xgboost JSON or UBJSON"));
}

/* Random damage to a JSON and a UBJSON model: every result is a clean load
 * or a clean error (run under ASan by make check-asan). */
static void test_damaged_files_never_crash(void **state)
{
    (void)state;
    char err[512];
    pd_model *m = pd_model_load_buffer(tiny_model, strlen(tiny_model), "tiny", err, sizeof err);
    assert_non_null(m);
    assert_int_equal(pd_model_save(m, tmp("tiny.ubj"), err, sizeof err), PD_OK);
    pd_model_free(m);
    size_t ulen = 0;
    char *ubj = pd_read_file(tmp("tiny.ubj"), &ulen);
    assert_non_null(ubj);
    pd_model *u = pd_model_load_buffer(ubj, ulen, "tiny.ubj", err, sizeof err);
    if (!u)
        fail_msg("%s", err);
    pd_model_free(u);
    const char *srcs[2] = {tiny_model, ubj};
    size_t lens[2] = {strlen(tiny_model), ulen};
    char *buf = malloc(lens[0] > ulen ? lens[0] : ulen);
    assert_non_null(buf);
    int loaded = 0, refused = 0;
    for (int s = 0; s < 2; s++)
        for (int it = 0; it < 1500; it++) {
            size_t len = lens[s];
            memcpy(buf, srcs[s], len);
            int edits = 1 + (int)(uni() * 4);
            for (int e = 0; e < edits; e++) {
                size_t at = 1 + (size_t)(uni() * (double)(len - 1));
                buf[at] = (char)(uni() < 0.5 ? (int)(uni() * 256) : "0123456789-[]{}#$LldU,\""[(int)(uni() * 23)]);
            }
            if (uni() < 0.2)
                len = 1 + (size_t)(uni() * (double)(len - 1)); /* truncated */
            char *exact = malloc(len); /* so that ASan sees any overread */
            assert_non_null(exact);
            memcpy(exact, buf, len);
            m = pd_model_load_buffer(exact, len, "damaged", err, sizeof err);
            free(exact);
            if (m) {
                float row[PD_MODEL_NINPUTS] = {0};
                double f;
                pd_model_raw_predict(m, row, 1, &f);
                loaded++;
            } else {
                assert_non_null(strstr(err, "damaged: "));
                refused++;
            }
            pd_model_free(m);
        }
    assert_true(refused > 0);
    print_message("damaged models: %d loaded, %d refused\n", loaded, refused);
    free(buf);
    free(ubj);
    /* UBJSON specifics */
    static const unsigned char huge_count[] = {'{', 'L', 0, 0, 0, 0, 0, 0, 0, 1, 'a', '[', '$', 'd', '#',
                                               'L', 0x7f, 0, 0, 0, 0, 0, 0, 0};
    assert_null(pd_model_load_buffer(huge_count, sizeof huge_count, "huge.ubj", err, sizeof err));
    assert_non_null(strstr(err, "exceeds"));
    /* lengths count from after the length itself: 3 bytes claimed, 2 left
     * (an exact heap copy, so that ASan sees any overread) */
    static const unsigned char short_str[] = {'{', 'i', 1, 'a', 'S', 'i', 3, 'x', 'y'};
    static const unsigned char short_key[] = {'{', 'i', 4, 'a', 'b'};
    const unsigned char *shorts[] = {short_str, short_key};
    size_t short_len[] = {sizeof short_str, sizeof short_key};
    for (int k = 0; k < 2; k++) {
        unsigned char *copy = malloc(short_len[k]);
        assert_non_null(copy);
        memcpy(copy, shorts[k], short_len[k]);
        assert_null(pd_model_load_buffer(copy, short_len[k], "short.ubj", err, sizeof err));
        assert_non_null(strstr(err, "exceeds"));
        free(copy);
    }
    unsigned char deep[400];
    deep[0] = '{';
    deep[1] = 'i';
    deep[2] = 1;
    deep[3] = 'a';
    for (size_t k = 4; k < sizeof deep; k++)
        deep[k] = '[';
    assert_null(pd_model_load_buffer(deep, sizeof deep, "deep.ubj", err, sizeof err));
    assert_non_null(strstr(err, "nested deeper than"));
}

static int setup(void **state)
{
    (void)state;
    setenv("PADDISER_QUIET", "1", 1);
    unsetenv("PADDISER_MODEL");
    snprintf(dir, sizeof dir, "/tmp/pd_native_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    const char *names[] = {"syn.csv", "t.ubj", "fork.json", "tiny.ubj"};
    for (size_t i = 0; i < PD_ARRAY_LEN(names); i++)
        unlink(tmp(names[i]));
    rmdir(dir);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_semantics),
        cmocka_unit_test(test_default_model_matches_xgboost),
        cmocka_unit_test(test_trained_models_match_xgboost),
        cmocka_unit_test(test_concurrent_predictions),
        cmocka_unit_test(test_fork_child_loads_and_predicts),
        cmocka_unit_test(test_load_free_in_exit_handler),
        cmocka_unit_test(test_malformed_models_rejected),
        cmocka_unit_test(test_damaged_files_never_crash),
    };
    return cmocka_run_group_tests_name("model_native", tests, setup, teardown);
}
