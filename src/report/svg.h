/* Inline-SVG chart primitives for the HTML report: axes with nice ticks,
 * line/scatter charts with error bars, heatmaps with a colour legend, bar
 * charts with a reference line. Output is polyglot XHTML (well-formed XML),
 * deterministic (fixed number formats, no ids), and every element a test may
 * count carries a class: svg.pd-chart, rect.pd-cell, rect.pd-bar, ... */
#ifndef PD_REPORT_SVG_H
#define PD_REPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"

/* The series colours, in order (the static SVG's and the live charts'). */
#define PD_SVG_NPALETTE 10
extern const char *const pd_svg_palette[PD_SVG_NPALETTE];

/* Appends text with & < > " ' escaped. */
void pd_html_escape(pd_str *out, const char *text);

/* At most max "nice" ticks (1, 2 or 5 x 10^k steps) covering [lo, hi], about
 * target of them; *step gets the spacing. Returns the count. */
size_t pd_svg_nice_ticks(double lo, double hi, size_t target, double *ticks, size_t max,
                         double *step);

/* Short, deterministic label of v for an axis whose tick spacing is step
 * (step <= 0: 4 significant digits). */
void pd_svg_fmt(char *buf, size_t len, double v, double step);

/* Tick label: like pd_svg_fmt, but 10000 and above with an SI suffix
 * (699050 -> 699k, 2.8e6 -> 2.80M) so axis labels stay short. */
void pd_svg_fmt_tick(char *buf, size_t len, double v, double step);

/* Unit of a metric guessed from its name suffix (mem_peak_gb -> "GB"), or "". */
const char *pd_svg_unit_of(const char *metric);

typedef struct {
    const char *name; /* legend label ("" = none) */
    size_t n;
    const double *x, *y;
    const double *err; /* +/- half-height of error bars, NULL = none */
    const size_t *count; /* samples behind each point (tooltips), NULL = none */
} pd_svg_series;

typedef struct {
    const char *kind;   /* extra class after pd-chart: "pd-line", "pd-ts" */
    const char *metric; /* data-metric */
    const char *var;    /* data-var, NULL = none */
    const char *title, *xlabel, *ylabel;
    int width;          /* 0 = default */
    /* x axis: categories (x values are 0..ncats-1) or numbers */
    const char *const *xcats;
    size_t nxcats;
    bool xlog;                  /* log10 axis (all x > 0) */
    const double *xticks;       /* explicit tick positions, NULL = nice ticks */
    size_t nxticks;
    bool markers;               /* points with tooltips (else lines only) */
    bool x_fixed;               /* numeric x frame is [x_from, x_to] (shared by charts) */
    double x_from, x_to;
    bool y_zero;                /* include 0 in the y range */
    double y_top;               /* include this in the y range when > 0 */
    const pd_svg_series *series;
    size_t nseries;
} pd_svg_xy;

void pd_svg_xy_chart(pd_str *out, const pd_svg_xy *c);

typedef struct {
    const char *metric, *title, *xlabel, *ylabel, *unit;
    const char *const *xcats;
    size_t nx;
    const char *const *ycats;
    size_t ny;
    const double *v; /* v[iy * nx + ix], NaN = no data */
} pd_svg_heatmap;

void pd_svg_heatmap_chart(pd_str *out, const pd_svg_heatmap *h);

typedef struct {
    const char *metric, *policy, *title, *xlabel, *ylabel;
    const char *const *labels;
    size_t n;
    const double *v;
    const char *const *tips; /* extra tooltip line per bar, NULL = none */
    double refline;          /* horizontal reference (makespan); NaN = none */
    double ymax;             /* y axis reaches at least this (shared scale), 0 = auto */
    const char *reflabel;
} pd_svg_bars;

void pd_svg_bar_chart(pd_str *out, const pd_svg_bars *b);

/* Box plots, one per category: the values of its repetitions (any order;
 * NaN ignored), drawn as a box from the first to the third quartile, a
 * median line, whiskers to min and max, and every value as a point. */
typedef struct {
    const char *metric, *title, *xlabel, *ylabel;
    const char *const *labels;
    size_t n;
    const double *const *vals; /* vals[i][0..nvals[i]) */
    const size_t *nvals;
} pd_svg_boxes;

void pd_svg_box_chart(pd_str *out, const pd_svg_boxes *b);

/* Parallel coordinates: one vertical axis per variable and a last one for
 * the metric; one line per row through its positions (0 = bottom, 1 =
 * top), coloured by its metric position. */
typedef struct {
    const char *name;
    size_t nticks;
    const char *const *tick_labels;
    const double *tick_pos; /* [0, 1] */
} pd_svg_pc_axis;

typedef struct {
    const char *metric, *title;
    const pd_svg_pc_axis *axes;
    size_t naxes;
    size_t nrows;
    const double *pos;           /* pos[row * naxes + axis], [0, 1], NaN = none */
    const char *const *tips;     /* tooltip per row */
    double data_lo, axis_lo;     /* the metric's lowest value and axis end (data-* attributes) */
} pd_svg_pc;

void pd_svg_parcoords_chart(pd_str *out, const pd_svg_pc *c);

/* Colour of t in [0,1] on the heatmap scale, as "#rrggbb". */
void pd_svg_colour(double t, char buf[8]);

#endif
