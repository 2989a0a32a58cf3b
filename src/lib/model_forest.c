/* The performance model's trees, evaluated natively (docs/model.md): read
 * from the JSON document xgboost 1.x saves (learner.gradient_booster.model
 * .trees[]), checked so that a malformed file is refused with a message and
 * never crashes or loops, and evaluated as xgboost's CPU predictor does:
 * a missing (NaN) input takes the node's default direction, otherwise
 * `x < split_condition` goes left; a leaf's value is its split_conditions
 * entry; the prediction is base_score plus one leaf per tree, summed in
 * float in tree order. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "lib/model_internal.h"

/* Trees and nodes beyond these are not a performance model. */
#define MAX_TREES 100000
#define MAX_NODES_PER_TREE (1 << 24)

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

/* o[key] of the given type (JSON_OBJECT / JSON_ARRAY), else NULL + err. */
static const json_t *member(const json_t *o, const char *key, json_type type, const char *where, char *err,
                            size_t errlen)
{
    const json_t *v = json_object_get(o, key);
    if (!v) {
        fail(err, errlen, "missing key '%s%s%s'", where, *where ? "." : "", key);
        return NULL;
    }
    if (json_typeof(v) != type) {
        fail(err, errlen, "'%s%s%s' is %s, want %s", where, *where ? "." : "", key, type_name(v),
             type == JSON_OBJECT ? "an object" : "an array");
        return NULL;
    }
    return v;
}

/* xgboost stores parameters as strings ("9", "5E-1"); numbers are accepted
 * too. Returns 1 found, 0 absent (when !required), -1 error. */
static int param_double(const json_t *o, const char *key, int required, const char *where, double *out,
                        char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, key);
    if (!v) {
        if (required)
            return fail(err, errlen, "missing key '%s.%s'", where, key);
        return 0;
    }
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 1;
    }
    if (json_is_string(v)) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", json_string_value(v));
        char *s = pd_trim(buf);
        size_t n = strlen(s);
        if (n >= 2 && s[0] == '[' && s[n - 1] == ']') { /* newer xgboost: "[5E-1]" */
            s[n - 1] = '\0';
            s = pd_trim(s + 1);
        }
        if (pd_parse_double(s, out) && isfinite(*out))
            return 1;
    }
    return fail(err, errlen, "'%s.%s' is not a number", where, key);
}

static int param_long(const json_t *o, const char *key, int required, const char *where, long *out, char *err,
                      size_t errlen)
{
    double d = 0;
    int rc = param_double(o, key, required, where, &d, err, errlen);
    if (rc <= 0)
        return rc;
    if (d != floor(d) || fabs(d) > 1e15)
        return fail(err, errlen, "'%s.%s' is not an integer", where, key);
    *out = (long)d;
    return 1;
}

static int int_at(const json_t *a, size_t i, long *out)
{
    const json_t *v = json_array_get(a, i);
    if (json_is_integer(v)) {
        *out = (long)json_integer_value(v);
        return 1;
    }
    if (json_is_boolean(v)) { /* default_left may be written as booleans */
        *out = json_is_true(v);
        return 1;
    }
    return 0;
}

static int check_learner(const json_t *doc, const json_t **trees, double *base_score, char *err, size_t errlen)
{
    if (!json_is_object(doc))
        return fail(err, errlen, "the document is %s, want an object", type_name(doc));
    const json_t *learner = member(doc, "learner", JSON_OBJECT, "", err, errlen);
    if (!learner)
        return -1;
    const json_t *mp = member(learner, "learner_model_param", JSON_OBJECT, "learner", err, errlen);
    if (!mp)
        return -1;
    const char *mpw = "learner.learner_model_param";
    long nfeat = 0, ncls = 0, ntarget = 1;
    if (param_long(mp, "num_feature", 1, mpw, &nfeat, err, errlen) < 0 ||
        param_long(mp, "num_class", 0, mpw, &ncls, err, errlen) < 0 ||
        param_long(mp, "num_target", 0, mpw, &ntarget, err, errlen) < 0 ||
        param_double(mp, "base_score", 1, mpw, base_score, err, errlen) < 0)
        return -1;
    if (nfeat != PD_MODEL_NINPUTS)
        return fail(err, errlen, "model takes %ld inputs, want %d (8 features + r)", nfeat, PD_MODEL_NINPUTS);
    if (ncls > 1 || ntarget != 1)
        return fail(err, errlen, "model has %ld classes / %ld targets, want one regression output", ncls, ntarget);
    const json_t *obj = member(learner, "objective", JSON_OBJECT, "learner", err, errlen);
    if (!obj)
        return -1;
    const char *oname = json_string_value(json_object_get(obj, "name"));
    /* other objectives transform the sum (logistic, exp, ...) */
    if (!oname || strcmp(oname, "reg:squarederror") != 0)
        return fail(err, errlen, "objective '%s' is not supported (want reg:squarederror)",
                    oname ? oname : "(missing learner.objective.name)");
    const json_t *gb = member(learner, "gradient_booster", JSON_OBJECT, "learner", err, errlen);
    if (!gb)
        return -1;
    const char *gname = json_string_value(json_object_get(gb, "name"));
    if (!gname || strcmp(gname, "gbtree") != 0)
        return fail(err, errlen, "booster '%s' is not supported (want gbtree)",
                    gname ? gname : "(missing learner.gradient_booster.name)");
    const char *mw = "learner.gradient_booster.model";
    const json_t *model = member(gb, "model", JSON_OBJECT, "learner.gradient_booster", err, errlen);
    if (!model || !(*trees = member(model, "trees", JSON_ARRAY, mw, err, errlen)))
        return -1;
    size_t nt = json_array_size(*trees);
    if (nt > MAX_TREES)
        return fail(err, errlen, "%zu trees (at most %d)", nt, MAX_TREES);
    const json_t *gp = json_object_get(model, "gbtree_model_param");
    long num_trees = (long)nt;
    if (gp && param_long(gp, "num_trees", 0, "learner.gradient_booster.model.gbtree_model_param", &num_trees,
                         err, errlen) < 0)
        return -1;
    if (num_trees != (long)nt)
        return fail(err, errlen, "gbtree_model_param.num_trees = %ld but %zu trees", num_trees, nt);
    const json_t *info = json_object_get(model, "tree_info");
    if (info) { /* output group of each tree: all 0 for one output */
        if (!json_is_array(info) || json_array_size(info) != nt)
            return fail(err, errlen, "'%s.tree_info' is not an array of %zu entries", mw, nt);
        for (size_t t = 0; t < nt; t++) {
            long g;
            if (!int_at(info, t, &g) || g != 0)
                return fail(err, errlen, "tree %zu is for output group other than 0", t);
        }
    }
    return 0;
}

static const char *const tree_arrays[] = {"left_children", "right_children", "split_indices", "split_conditions",
                                          "default_left"};
enum { A_LEFT, A_RIGHT, A_INDEX, A_COND, A_DEFLEFT, A_N };

/* Appends tree t's nodes to f->nodes (capacity *cap), children made
 * absolute, after checking every entry and walking the tree from its root. */
static int read_tree(const json_t *tree, size_t t, pd_forest *f, size_t *cap, char *err, size_t errlen)
{
    char where[64];
    snprintf(where, sizeof where, "trees[%zu]", t);
    if (!json_is_object(tree))
        return fail(err, errlen, "%s is %s, want an object", where, type_name(tree));
    const json_t *tp = member(tree, "tree_param", JSON_OBJECT, where, err, errlen);
    if (!tp)
        return -1;
    char tpw[80];
    snprintf(tpw, sizeof tpw, "%s.tree_param", where);
    long n = 0, leafvec = 0;
    if (param_long(tp, "num_nodes", 1, tpw, &n, err, errlen) < 0 ||
        param_long(tp, "size_leaf_vector", 0, tpw, &leafvec, err, errlen) < 0)
        return -1;
    if (n < 1 || n > MAX_NODES_PER_TREE)
        return fail(err, errlen, "%s: num_nodes = %ld (want 1..%d)", where, n, MAX_NODES_PER_TREE);
    if (leafvec != 0)
        return fail(err, errlen, "%s: vector leaves are not supported", where);
    const json_t *a[A_N];
    for (int k = 0; k < A_N; k++) {
        if (!(a[k] = member(tree, tree_arrays[k], JSON_ARRAY, where, err, errlen)))
            return -1;
        if (json_array_size(a[k]) != (size_t)n)
            return fail(err, errlen, "%s.%s has %zu entries, want num_nodes = %ld", where, tree_arrays[k],
                        json_array_size(a[k]), n);
    }
    const json_t *stype = json_object_get(tree, "split_type");
    if (stype && json_array_size(stype) > 0) {
        if (!json_is_array(stype) || json_array_size(stype) != (size_t)n)
            return fail(err, errlen, "%s.split_type has %zu entries, want num_nodes = %ld", where,
                        json_array_size(stype), n);
        for (long i = 0; i < n; i++) {
            long st;
            if (!int_at(stype, (size_t)i, &st) || st != 0)
                return fail(err, errlen, "%s: node %ld: categorical splits are not supported", where, i);
        }
    }
    if (f->nnodes + (size_t)n > *cap) {
        size_t nc = *cap ? *cap : 1024;
        while (nc < f->nnodes + (size_t)n)
            nc *= 2;
        pd_tree_node *nn = realloc(f->nodes, nc * sizeof *nn);
        if (!nn)
            return fail(err, errlen, "out of memory");
        f->nodes = nn;
        *cap = nc;
    }
    pd_tree_node *nodes = f->nodes + f->nnodes;
    for (long i = 0; i < n; i++) {
        long l, r, idx, dl;
        const json_t *cv = json_array_get(a[A_COND], (size_t)i);
        if (!int_at(a[A_LEFT], (size_t)i, &l) || !int_at(a[A_RIGHT], (size_t)i, &r) ||
            !int_at(a[A_INDEX], (size_t)i, &idx) || !int_at(a[A_DEFLEFT], (size_t)i, &dl))
            return fail(err, errlen, "%s: node %ld: children, split index and default_left must be integers", where,
                        i);
        if (!json_is_number(cv) || !isfinite(json_number_value(cv)))
            return fail(err, errlen, "%s: node %ld: split_conditions entry is not a finite number", where, i);
        int leaf = l == -1 && r == -1;
        if (!leaf && (l < 1 || l >= n || r < 1 || r >= n || l == r))
            return fail(err, errlen, "%s: node %ld: child index out of range (left %ld, right %ld, num_nodes %ld)",
                        where, i, l, r, n);
        if (!leaf && (idx < 0 || idx >= PD_MODEL_NINPUTS))
            return fail(err, errlen, "%s: node %ld: split feature %ld out of range (model takes %d inputs)", where,
                        i, idx, PD_MODEL_NINPUTS);
        if (dl != 0 && dl != 1)
            return fail(err, errlen, "%s: node %ld: default_left is %ld, want 0 or 1", where, i, dl);
        int32_t self = (int32_t)(f->nnodes + (size_t)i);
        nodes[i] = (pd_tree_node){
            .left = leaf ? self : (int32_t)(f->nnodes + (size_t)l),
            .right = leaf ? self : (int32_t)(f->nnodes + (size_t)r),
            .feature = (leaf ? PD_NODE_LEAF : (uint32_t)idx) | (dl ? PD_NODE_DEFAULT_LEFT : 0u),
            .value = (float)json_number_value(cv),
        };
    }
    /* Walk from the root: a node reached twice means a cycle or a shared
     * subtree; the explicit stack holds each node at most once. */
    unsigned char *seen = calloc((size_t)n, 1);
    int32_t *stack = malloc((size_t)n * sizeof *stack);
    int *depth = malloc((size_t)n * sizeof *depth);
    int rc = 0;
    if (!seen || !stack || !depth) {
        rc = fail(err, errlen, "out of memory");
        goto out;
    }
    size_t sp = 0;
    stack[sp] = 0;
    depth[sp++] = 0;
    seen[0] = 1;
    int deepest = 0;
    while (sp > 0 && rc == 0) {
        sp--;
        int32_t i = stack[sp];
        int d = depth[sp];
        if (d > deepest)
            deepest = d;
        if (nodes[i].feature & PD_NODE_LEAF)
            continue;
        int32_t kids[2] = {nodes[i].left - (int32_t)f->nnodes, nodes[i].right - (int32_t)f->nnodes};
        for (int k = 0; k < 2 && rc == 0; k++) {
            if (seen[kids[k]])
                rc = fail(err, errlen, "%s: node %d is reached twice (a cycle or shared subtree), via node %d",
                          where, kids[k], i);
            else if (d + 1 > PD_FOREST_MAX_DEPTH)
                rc = fail(err, errlen, "%s: deeper than %d levels", where, PD_FOREST_MAX_DEPTH);
            else {
                seen[kids[k]] = 1;
                stack[sp] = kids[k];
                depth[sp++] = d + 1;
            }
        }
    }
    if (rc == 0) {
        f->root[t] = (int32_t)f->nnodes;
        f->depth[t] = deepest;
        if (deepest > f->max_depth)
            f->max_depth = deepest;
        f->nnodes += (size_t)n;
    }
out:
    free(seen);
    free(stack);
    free(depth);
    return rc;
}

int pd_forest_from_json(const json_t *doc, pd_forest *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    const json_t *trees = NULL;
    double base = 0;
    if (check_learner(doc, &trees, &base, err, errlen) != 0)
        return -1;
    size_t nt = json_array_size(trees);
    f->base_score = (float)base;
    f->root = malloc((nt ? nt : 1) * sizeof *f->root);
    f->depth = malloc((nt ? nt : 1) * sizeof *f->depth);
    if (!f->root || !f->depth) {
        pd_forest_free(f);
        return fail(err, errlen, "out of memory");
    }
    size_t cap = 0;
    for (size_t t = 0; t < nt; t++) {
        if (f->nnodes > (size_t)INT32_MAX - MAX_NODES_PER_TREE) {
            pd_forest_free(f);
            return fail(err, errlen, "too many nodes");
        }
        if (read_tree(json_array_get(trees, t), t, f, &cap, err, errlen) != 0) {
            pd_forest_free(f);
            return -1;
        }
    }
    f->ntrees = nt;
    return 0;
}

void pd_forest_free(pd_forest *f)
{
    if (!f)
        return;
    free(f->root);
    free(f->depth);
    free(f->nodes);
    memset(f, 0, sizeof *f);
}

/* One step down: x < split goes left; a missing x (NaN, for which the
 * comparison is false) goes the default way. Branch-free, and a leaf
 * stays where it is. */
static inline int32_t step(const pd_tree_node *nodes, int32_t i, const float *x)
{
    const pd_tree_node *nd = nodes + i;
    float v = x[nd->feature & PD_NODE_FEATURE_MASK];
    int left = (v < nd->value) | ((v != v) & (int)(nd->feature >> 31));
    return left ? nd->left : nd->right;
}

/* Rows are taken in blocks (the trees stay in cache) and, within a tree,
 * four at a time for exactly the tree's depth in steps: four independent
 * walks overlap in the pipeline and no branch depends on the data. Each
 * row still adds its leaves in tree order, like xgboost. */
#define BLOCK 64
void pd_forest_predict(const pd_forest *f, const float *rows, size_t n, float *out)
{
    const pd_tree_node *nodes = f->nodes;
    const size_t w = PD_MODEL_NINPUTS;
    float acc[BLOCK];
    for (size_t i0 = 0; i0 < n; i0 += BLOCK) {
        size_t k = n - i0 < BLOCK ? n - i0 : BLOCK;
        const float *x = rows + i0 * w;
        for (size_t j = 0; j < k; j++)
            acc[j] = f->base_score;
        for (size_t t = 0; t < f->ntrees; t++) {
            int32_t root = f->root[t], depth = f->depth[t];
            size_t j = 0;
            for (; j + 8 <= k; j += 8) {
                const float *xj = x + j * w;
                int32_t a0 = root, a1 = root, a2 = root, a3 = root, a4 = root, a5 = root, a6 = root, a7 = root;
                for (int32_t s = 0; s < depth; s++) {
                    a0 = step(nodes, a0, xj);
                    a1 = step(nodes, a1, xj + w);
                    a2 = step(nodes, a2, xj + 2 * w);
                    a3 = step(nodes, a3, xj + 3 * w);
                    a4 = step(nodes, a4, xj + 4 * w);
                    a5 = step(nodes, a5, xj + 5 * w);
                    a6 = step(nodes, a6, xj + 6 * w);
                    a7 = step(nodes, a7, xj + 7 * w);
                }
                acc[j + 0] += nodes[a0].value;
                acc[j + 1] += nodes[a1].value;
                acc[j + 2] += nodes[a2].value;
                acc[j + 3] += nodes[a3].value;
                acc[j + 4] += nodes[a4].value;
                acc[j + 5] += nodes[a5].value;
                acc[j + 6] += nodes[a6].value;
                acc[j + 7] += nodes[a7].value;
            }
            for (; j < k; j++) {
                int32_t a = root;
                for (int32_t s = 0; s < depth; s++)
                    a = step(nodes, a, x + j * w);
                acc[j] += nodes[a].value;
            }
        }
        memcpy(out + i0, acc, k * sizeof *acc);
    }
}
