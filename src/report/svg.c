#include "report/svg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAR_W 6.3  /* average glyph width at 11px sans-serif, for layout */
#define DIGIT_W 7.0 /* digits are wider (0.636 em in DejaVu Sans) */
#define MAX_TICKS 32

const char *const pd_svg_palette[PD_SVG_NPALETTE] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                                     "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

void pd_html_escape(pd_str *out, const char *text)
{
    if (!text)
        return;
    const char *run = text;
    for (const char *p = text; *p; p++) {
        const char *rep = NULL;
        switch (*p) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default:
            /* control characters are not allowed in XML text */
            if ((unsigned char)*p < 0x20 && *p != '\t' && *p != '\n')
                rep = " ";
        }
        if (rep) {
            pd_str_appendn(out, run, (size_t)(p - run));
            pd_str_append(out, rep);
            run = p + 1;
        }
    }
    pd_str_append(out, run);
}

/* Code points in UTF-8 text (continuation bytes are not counted). */
static size_t u8_len(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

/* Escapes at most max code points of text, with an ellipsis when cut. */
static void esc_trunc(pd_str *out, const char *text, size_t max)
{
    if (!text)
        return;
    if (u8_len(text) <= max) {
        pd_html_escape(out, text);
        return;
    }
    size_t keep = max > 1 ? max - 1 : 1, n = 0;
    const char *p = text;
    for (; *p; p++) {
        if (((unsigned char)*p & 0xC0) != 0x80 && n++ == keep)
            break;
    }
    pd_str tmp = {0};
    pd_str_appendn(&tmp, text, (size_t)(p - text));
    pd_html_escape(out, tmp.data ? tmp.data : "");
    pd_str_free(&tmp);
    pd_str_append(out, "&#8230;");
}

static double fit_chars(double px) { return px / CHAR_W; }

static size_t clampz(double v, size_t lo, size_t hi)
{
    if (!(v > (double)lo))
        return lo;
    if (v > (double)hi)
        return hi;
    return (size_t)v;
}

void pd_svg_fmt(char *buf, size_t len, double v, double step)
{
    if (!isfinite(v)) {
        snprintf(buf, len, "n/a");
        return;
    }
    double av = fabs(v);
    if (av == 0)
        snprintf(buf, len, "0");
    else if (av >= 1e12 || av < 1e-3)
        snprintf(buf, len, "%.4g", v);
    else if (step <= 0) /* whole numbers above 1000: 131335, not 1.313e+05 */
        snprintf(buf, len, av >= 1000 ? "%.0f" : "%.4g", v);
    else {
        int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
        if (dec > 6)
            dec = 6;
        snprintf(buf, len, "%.*f", dec, v);
    }
    /* "-0.0" reads as a bug */
    if (buf[0] == '-' && strspn(buf + 1, "0.") == strlen(buf + 1))
        memmove(buf, buf + 1, strlen(buf));
}

void pd_svg_fmt_tick(char *buf, size_t len, double v, double step)
{
    static const struct {
        double scale;
        const char *suffix;
    } si[] = {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
    double av = fabs(v);
    /* 6.99e+05 and 140000 read slowly on an axis: 699k, 140k */
    for (size_t i = 0; isfinite(v) && av >= 1e4 && i < PD_ARRAY_LEN(si); i++) {
        if (av < si[i].scale)
            continue;
        double s = step > 0 ? step / si[i].scale : 0;
        int dec = s <= 0 ? (av / si[i].scale < 10 ? 2 : av / si[i].scale < 100 ? 1 : 0)
                         : s >= 1 ? 0 : (int)ceil(-log10(s) - 1e-9);
        if (dec > 3)
            dec = 3;
        snprintf(buf, len, "%.*f%s", dec, v / si[i].scale, si[i].suffix);
        return;
    }
    pd_svg_fmt(buf, len, v, step);
}

static double nice_step(double raw)
{
    if (!(raw > 0) || !isfinite(raw))
        return 1;
    double e = pow(10, floor(log10(raw)));
    double f = raw / e;
    double nf = f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10;
    return nf * e;
}

size_t pd_svg_nice_ticks(double lo, double hi, size_t target, double *ticks, size_t max,
                         double *step)
{
    if (!isfinite(lo) || !isfinite(hi) || max == 0) {
        *step = 1;
        return 0;
    }
    if (hi < lo) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    if (hi == lo) {
        double d = lo != 0 ? fabs(lo) * 0.1 : 1;
        lo -= d;
        hi += d;
    }
    if (target < 2)
        target = 2;
    double s = nice_step((hi - lo) / (double)(target - 1));
    for (;;) {
        double first = floor(lo / s) * s, last = ceil(hi / s) * s;
        double count = round((last - first) / s) + 1;
        if (count <= (double)max) {
            size_t n = (size_t)count;
            for (size_t i = 0; i < n; i++) {
                double t = first + (double)i * s;
                ticks[i] = fabs(t) < s * 1e-9 ? 0 : t;
            }
            *step = s;
            return n;
        }
        s = nice_step(s * 1.5);
    }
}

const char *pd_svg_unit_of(const char *m)
{
    static const struct {
        const char *suffix, *unit;
    } units[] = {
        {"_mbs_avg", "MiB/s"}, {"_mbs_active", "MiB/s"}, {"_mbs_peak_per_node", "MiB/s"},
        {"_mbs", "MiB/s"},     {"_iops_avg", "ops/s"},   {"_iops", "ops/s"},
        {"_per_node_gb", "GiB"}, {"_gb", "GiB"},         {"_mib", "MiB"},
        {"_kb", "KiB"},        {"_bytes", "B"},          {"_pct", "%"},
        {"_energy_j", "J"},    {"_j", "J"},              {"_w", "W"},
        {"_temperature_c", "\xC2\xB0" "C"},              {"_mhz", "MHz"},
        {"_active_s", "s"},    {"_duration_s", "s"},     {"_time_s", "s"},
        {"_s", "s"},           {"_ms", "ms"},            {"_us", "\xC2\xB5s"},
        {"_ns", "ns"},         {"_gflops", "GFLOP/s"},   {"_gbs", "GiB/s"},
    };
    size_t len = strlen(m);
    for (size_t i = 0; i < PD_ARRAY_LEN(units); i++) {
        size_t sl = strlen(units[i].suffix);
        if (len > sl && !strcmp(m + len - sl, units[i].suffix))
            return units[i].unit;
    }
    if (!strcmp(m, "time") || !strcmp(m, "duration") || !strcmp(m, "runtime"))
        return "s";
    return "";
}

/* ---------- shared pieces ---------- */

static void svg_open(pd_str *out, const char *kind, const char *metric, const char *var,
                     const char *policy, const char *title, double w, double h, const char *extra)
{
    pd_str_printf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"pd-chart %s\"", kind);
    if (metric) {
        pd_str_append(out, " data-metric=\"");
        pd_html_escape(out, metric);
        pd_str_append(out, "\"");
    }
    if (var) {
        pd_str_append(out, " data-var=\"");
        pd_html_escape(out, var);
        pd_str_append(out, "\"");
    }
    if (policy) {
        pd_str_append(out, " data-policy=\"");
        pd_html_escape(out, policy);
        pd_str_append(out, "\"");
    }
    if (extra)
        pd_str_append(out, extra);
    pd_str_printf(out, " width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">", w, h,
                  w, h);
    pd_str_append(out, "<title>");
    pd_html_escape(out, title);
    pd_str_append(out, "</title>");
    pd_str_printf(out, "<text class=\"pd-title\" x=\"%.1f\" y=\"18\" text-anchor=\"middle\">", w / 2);
    esc_trunc(out, title, (size_t)fit_chars(w - 16) * 9 / 10);
    pd_str_append(out, "</text>");
}

static void text_at(pd_str *out, const char *cls, double x, double y, const char *anchor,
                    const char *text, size_t maxchars)
{
    pd_str_printf(out, "<text class=\"%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">", cls, x, y, anchor);
    esc_trunc(out, text, maxchars);
    pd_str_append(out, "</text>");
}

static void ylabel_at(pd_str *out, double x, double cy, const char *text, double room)
{
    pd_str_printf(out,
                  "<text class=\"pd-axis-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
                  "transform=\"rotate(-90 %.1f %.1f)\">",
                  x, cy, x, cy);
    esc_trunc(out, text, (size_t)fit_chars(room));
    pd_str_append(out, "</text>");
}

/* Horizontal grid lines and labels of a y axis. */
static void y_axis(pd_str *out, const double *ticks, size_t n, double step, double L, double R,
                   double (*sy)(const void *, double), const void *ctx)
{
    char buf[48];
    for (size_t i = 0; i < n; i++) {
        double y = sy(ctx, ticks[i]);
        pd_str_printf(out, "<line class=\"pd-gridline\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", L,
                      y, R, y);
        pd_svg_fmt_tick(buf, sizeof buf, ticks[i], step);
        text_at(out, "pd-tick", L - 5, y + 3.5, "end", buf, 9);
    }
}

/* Left margin that fits the y axis label and the widest tick label. */
static double left_margin(const double *ticks, size_t n, double step)
{
    size_t w = 1;
    char buf[48];
    for (size_t i = 0; i < n; i++) {
        pd_svg_fmt_tick(buf, sizeof buf, ticks[i], step);
        size_t l = u8_len(buf);
        w = l > w ? l : w;
    }
    if (w > 9)
        w = 9;
    return 24 + (double)w * DIGIT_W + 8;
}

/* ---------- x/y charts ---------- */

typedef struct {
    double L, T, PW, PH;
    double xlo, xhi, ylo, yhi;
    bool xlog, xcat;
    size_t ncats;
} xy_frame;

static double xy_sx(const xy_frame *f, double x)
{
    if (f->xcat)
        return f->L + (x + 0.5) * f->PW / (double)(f->ncats ? f->ncats : 1);
    double v = f->xlog ? log10(x) : x;
    return f->L + (v - f->xlo) / (f->xhi - f->xlo) * f->PW;
}

static double xy_sy(const void *ctx, double y)
{
    const xy_frame *f = ctx;
    return f->T + f->PH - (y - f->ylo) / (f->yhi - f->ylo) * f->PH;
}

static bool usable_x(const pd_svg_xy *c, double x)
{
    return isfinite(x) && (!c->xlog || x > 0);
}

typedef struct {
    double x, w;
    size_t series;
} legend_item;

/* Lays out legend items left to right, wrapping; returns the row count. */
static size_t legend_layout(const pd_svg_xy *c, double L, double maxx, legend_item *items)
{
    size_t row = 0;
    double x = L;
    for (size_t s = 0; s < c->nseries; s++) {
        const char *name = c->series[s].name ? c->series[s].name : "";
        double len = (double)u8_len(name);
        double w = 16 + (len > 28 ? 28 : len) * CHAR_W + 12;
        if (x > L && x + w > maxx) {
            row++;
            x = L;
        }
        items[s] = (legend_item){x, w, row};
        x += w;
    }
    return c->nseries ? row + 1 : 0;
}

/* Error bar ends of point i: clamped to [0, ...] when the data are all
 * non-negative (a stddev does not make a bandwidth negative) and to 100 for
 * percentages that stay within 100. */
typedef struct {
    bool nonneg, pct_cap;
} err_clamp;

static void err_ends(const err_clamp *k, double y, double e, double *lo, double *hi)
{
    *lo = y - e;
    *hi = y + e;
    if (k->nonneg && *lo < 0)
        *lo = 0;
    if (k->pct_cap && *hi > 100)
        *hi = 100;
}

void pd_svg_xy_chart(pd_str *out, const pd_svg_xy *c)
{
    xy_frame f = {.T = 34, .PH = 180, .xlog = c->xlog, .xcat = c->xcats != NULL, .ncats = c->nxcats};
    double W = c->width > 0 ? c->width : 440;

    /* data ranges */
    err_clamp k = {.nonneg = true, .pct_cap = !strcmp(pd_svg_unit_of(c->metric ? c->metric : ""), "%")};
    double dlo = INFINITY;
    for (size_t s = 0; s < c->nseries; s++)
        for (size_t i = 0; i < c->series[s].n; i++)
            if (isfinite(c->series[s].y[i]) && usable_x(c, c->series[s].x[i])) {
                dlo = fmin(dlo, c->series[s].y[i]);
                k.nonneg &= c->series[s].y[i] >= 0;
                k.pct_cap &= c->series[s].y[i] <= 100;
            }
    double ylo = INFINITY, yhi = -INFINITY, xlo = INFINITY, xhi = -INFINITY;
    for (size_t s = 0; s < c->nseries; s++) {
        const pd_svg_series *se = &c->series[s];
        for (size_t i = 0; i < se->n; i++) {
            if (!isfinite(se->y[i]) || !usable_x(c, se->x[i]))
                continue;
            double e = se->err && isfinite(se->err[i]) ? fabs(se->err[i]) : 0, lo, hi;
            err_ends(&k, se->y[i], e, &lo, &hi);
            ylo = fmin(ylo, lo);
            yhi = fmax(yhi, hi);
            xlo = fmin(xlo, se->x[i]);
            xhi = fmax(xhi, se->x[i]);
        }
    }
    bool have = isfinite(ylo);
    for (size_t i = 0; c->xticks && i < c->nxticks; i++)
        if (usable_x(c, c->xticks[i])) {
            xlo = fmin(xlo, c->xticks[i]);
            xhi = fmax(xhi, c->xticks[i]);
        }
    if (!have) {
        ylo = 0;
        yhi = 1;
    }
    if (c->y_zero) {
        ylo = fmin(ylo, 0);
        yhi = fmax(yhi, 0);
    }
    if (c->y_top > 0)
        yhi = fmax(yhi, c->y_top);
    double yt[MAX_TICKS], ystep;
    size_t nyt = pd_svg_nice_ticks(ylo, yhi, 5, yt, MAX_TICKS, &ystep);
    f.ylo = nyt ? yt[0] : ylo;
    f.yhi = nyt ? yt[nyt - 1] : yhi;
    if (!(f.yhi > f.ylo))
        f.yhi = f.ylo + 1;
    f.L = left_margin(yt, nyt, ystep);
    f.PW = W - f.L - 16;

    bool legend = c->nseries > 1 || (c->nseries == 1 && c->series[0].name && c->series[0].name[0]);
    legend_item items[64];
    size_t nleg = c->nseries < 64 ? c->nseries : 64;
    pd_svg_xy lc = *c;
    lc.nseries = nleg;
    size_t rows = legend ? legend_layout(&lc, f.L, W - 16, items) : 0;
    double H = f.T + f.PH + 42 + (rows ? (double)rows * 16 + 6 : 0) + 4;

    if (!f.xcat && c->x_fixed && c->x_to > c->x_from) {
        xlo = c->x_from;
        xhi = c->x_to;
    }
    if (!f.xcat) {
        if (!isfinite(xlo)) {
            xlo = f.xlog ? 1 : 0;
            xhi = f.xlog ? 10 : 1;
        }
        double a = f.xlog ? log10(xlo) : xlo, b = f.xlog ? log10(xhi) : xhi;
        if (b == a) {
            a -= f.xlog ? 0.5 : (a != 0 ? fabs(a) * 0.1 : 1);
            b += f.xlog ? 0.5 : (b != 0 ? fabs(b) * 0.1 : 1);
        }
        /* explicit ticks (swept values) sit inside with a margin; nice
         * ticks already bracket the data */
        double pad = c->xticks ? (b - a) * 0.06 : 0;
        f.xlo = a - pad;
        f.xhi = b + pad;
    }

    /* what check-report compares: the axis' low end and the data's */
    char extra[128], blo[48], bdl[48];
    snprintf(blo, sizeof blo, "%.6g", f.ylo);
    snprintf(bdl, sizeof bdl, "%.6g", have ? dlo : 0);
    snprintf(extra, sizeof extra, " data-y-lo=\"%s\" data-data-lo=\"%s\"", blo, bdl);
    svg_open(out, c->kind, c->metric, c->var, NULL, c->title, W, H, extra);
    y_axis(out, yt, nyt, ystep, f.L, f.L + f.PW, xy_sy, &f);

    /* x ticks: categories, explicit values or nice ticks */
    double xt[MAX_TICKS], xstep = 0;
    size_t nxt = 0;
    if (f.xcat) {
        nxt = c->nxcats;
    } else if (c->xticks) {
        nxt = c->nxticks;
    } else {
        /* the frame stays on the data; ticks rounding outside it are dropped */
        double all[MAX_TICKS];
        size_t nall = pd_svg_nice_ticks(f.xlo, f.xhi, 6, all, MAX_TICKS, &xstep);
        double tol = (f.xhi - f.xlo) * 1e-9;
        for (size_t i = 0; i < nall; i++)
            if (all[i] >= f.xlo - tol && all[i] <= f.xhi + tol)
                xt[nxt++] = all[i];
    }
    double last_right = -INFINITY;
    for (size_t i = 0; i < nxt; i++) {
        char buf[48];
        const char *label;
        double x;
        if (f.xcat) {
            x = xy_sx(&f, (double)i);
            label = c->xcats[i];
        } else {
            double v = c->xticks ? c->xticks[i] : xt[i];
            if (!usable_x(c, v))
                continue;
            x = xy_sx(&f, v);
            pd_svg_fmt_tick(buf, sizeof buf, v, c->xticks ? 0 : xstep);
            label = buf;
        }
        double room = f.xcat ? f.PW / (double)(nxt ? nxt : 1) : 80;
        size_t maxch = clampz(fit_chars(room) - 1, 3, 16);
        size_t len = u8_len(label);
        double w = (double)(len < maxch ? len : maxch) * CHAR_W;
        pd_str_printf(out, "<line class=\"pd-tickmark\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                      x, f.T + f.PH, x, f.T + f.PH + 4);
        if (x - w / 2 < last_right + 4)
            continue; /* would overlap the previous label */
        text_at(out, "pd-tick", x, f.T + f.PH + 15, "middle", label, maxch);
        last_right = x + w / 2;
    }
    pd_str_printf(out,
                  "<path class=\"pd-axis\" d=\"M%.1f %.1fV%.1fH%.1f\" fill=\"none\" stroke=\"#333\"/>",
                  f.L, f.T, f.T + f.PH, f.L + f.PW);
    text_at(out, "pd-axis-label", f.L + f.PW / 2, f.T + f.PH + 33, "middle", c->xlabel,
            (size_t)fit_chars(f.PW));
    ylabel_at(out, 14, f.T + f.PH / 2, c->ylabel, f.PH + 20);

    if (!have)
        text_at(out, "pd-nodata", f.L + f.PW / 2, f.T + f.PH / 2, "middle", "no data", 20);

    for (size_t s = 0; s < c->nseries; s++) {
        const pd_svg_series *se = &c->series[s];
        const char *col = pd_svg_palette[s % PD_SVG_NPALETTE];
        pd_str_append(out, "<g class=\"pd-series\" data-series=\"");
        pd_html_escape(out, se->name ? se->name : "");
        pd_str_append(out, "\">");
        pd_str path = {0};
        bool pen = false, segment = false; /* a line needs two adjacent points */
        for (size_t i = 0; i < se->n; i++) {
            if (!isfinite(se->y[i]) || !usable_x(c, se->x[i])) {
                pen = false;
                continue;
            }
            pd_str_printf(&path, "%s%.1f %.1f", pen ? "L" : "M", xy_sx(&f, se->x[i]), xy_sy(&f, se->y[i]));
            segment |= pen;
            pen = true;
        }
        if (segment)
            pd_str_printf(out,
                          "<path class=\"pd-line-path\" d=\"%s\" fill=\"none\" stroke=\"%s\" "
                          "stroke-width=\"1.6\" stroke-linejoin=\"round\"/>",
                          path.data, col);
        pd_str_free(&path);
        for (size_t i = 0; i < se->n; i++) {
            if (!isfinite(se->y[i]) || !usable_x(c, se->x[i]))
                continue;
            double x = xy_sx(&f, se->x[i]), y = xy_sy(&f, se->y[i]);
            double e = se->err && isfinite(se->err[i]) ? fabs(se->err[i]) : 0;
            if (e > 0) {
                double lo, hi;
                err_ends(&k, se->y[i], e, &lo, &hi);
                double y1 = xy_sy(&f, lo), y2 = xy_sy(&f, hi);
                pd_str_printf(out,
                              "<path class=\"pd-err\" d=\"M%.1f %.1fV%.1fM%.1f %.1fH%.1fM%.1f %.1fH%.1f\" "
                              "stroke=\"%s\" fill=\"none\"/>",
                              x, y1, y2, x - 3, y1, x + 3, x - 3, y2, x + 3, col);
            }
            if (!c->markers)
                continue;
            char bx[48], by[48], be[48];
            pd_str_printf(out, "<circle class=\"pd-point\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>",
                          x, y, col);
            if (se->name && se->name[0]) {
                pd_html_escape(out, se->name);
                pd_str_append(out, ": ");
            }
            if (f.xcat)
                pd_html_escape(out, c->xcats[(size_t)se->x[i] < c->nxcats ? (size_t)se->x[i] : 0]);
            else {
                pd_svg_fmt(bx, sizeof bx, se->x[i], 0);
                pd_str_append(out, bx);
            }
            pd_svg_fmt(by, sizeof by, se->y[i], 0);
            pd_str_printf(out, " \xE2\x86\x92 %s", by);
            if (se->err) {
                pd_svg_fmt(be, sizeof be, e, 0);
                pd_str_printf(out, " \xC2\xB1 %s", be);
            }
            if (se->count)
                pd_str_printf(out, " (n=%zu)", se->count[i]);
            pd_str_append(out, "</title></circle>");
        }
        pd_str_append(out, "</g>");
    }

    if (legend) {
        double top = f.T + f.PH + 44;
        for (size_t s = 0; s < nleg; s++) {
            double y = top + (double)items[s].series * 16;
            pd_str_printf(out,
                          "<rect class=\"pd-swatch\" x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>",
                          items[s].x, y, pd_svg_palette[s % PD_SVG_NPALETTE]);
            text_at(out, "pd-legend", items[s].x + 14, y + 9, "start", c->series[s].name, 28);
        }
    }
    pd_str_append(out, "</svg>");
}

/* ---------- heatmap ---------- */

void pd_svg_colour(double t, char buf[8])
{
    /* viridis, sampled at 10 stops: perceptually even, readable in grey */
    static const unsigned char stops[][3] = {
        {0x44, 0x01, 0x54}, {0x48, 0x28, 0x78}, {0x3e, 0x49, 0x89}, {0x31, 0x68, 0x8e},
        {0x26, 0x82, 0x8e}, {0x1f, 0x9e, 0x89}, {0x35, 0xb7, 0x79}, {0x6e, 0xce, 0x58},
        {0xb5, 0xde, 0x2b}, {0xfd, 0xe7, 0x25}};
    if (!(t >= 0))
        t = 0;
    if (t > 1)
        t = 1;
    double pos = t * 9;
    size_t i = (size_t)pos;
    if (i >= 9)
        i = 8;
    double u = pos - (double)i;
    unsigned char rgb[3];
    for (int k = 0; k < 3; k++)
        rgb[k] = (unsigned char)lround(stops[i][k] + (stops[i + 1][k] - stops[i][k]) * u);
    snprintf(buf, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

static size_t max_len(const char *const *s, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = u8_len(s[i]);
        if (l > m)
            m = l;
    }
    return m;
}

void pd_svg_heatmap_chart(pd_str *out, const pd_svg_heatmap *h)
{
    double vmin = INFINITY, vmax = -INFINITY;
    for (size_t i = 0; i < h->nx * h->ny; i++)
        if (isfinite(h->v[i])) {
            vmin = fmin(vmin, h->v[i]);
            vmax = fmax(vmax, h->v[i]);
        }
    size_t ych = max_len(h->ycats, h->ny), xch = max_len(h->xcats, h->nx);
    if (ych > 14)
        ych = 14;
    double cw = (double)clampz(floor(360.0 / (double)(h->nx ? h->nx : 1)), 14, 72);
    double ch = (double)clampz(floor(220.0 / (double)(h->ny ? h->ny : 1)), 12, 36);
    double L = 24 + (double)ych * CHAR_W + 8, T = 34;
    double PW = cw * (double)h->nx, PH = ch * (double)h->ny;
    bool rotate = (double)xch * CHAR_W > cw - 4;
    double bottom = rotate ? (double)(xch > 14 ? 14 : xch) * CHAR_W * 0.72 + 16 : 18;
    double legH = PH < 120 ? 120 : PH;
    /* colour-bar labels first: the unit goes right of the widest one */
    char lo[48] = "", hi[48] = "", mid[48] = "";
    if (isfinite(vmin)) {
        double step = vmax > vmin ? (vmax - vmin) / 200 : 0;
        pd_svg_fmt_tick(hi, sizeof hi, vmax, step);
        pd_svg_fmt_tick(lo, sizeof lo, vmin, step);
        pd_svg_fmt_tick(mid, sizeof mid, (vmin + vmax) / 2, step);
    }
    size_t lw = u8_len(hi);
    lw = u8_len(lo) > lw ? u8_len(lo) : lw;
    lw = u8_len(mid) > lw ? u8_len(mid) : lw;
    if (lw > 10)
        lw = 10;
    double unit_x = L + PW + 18 + 18 + (double)lw * DIGIT_W + 14;
    double W = unit_x + 12;
    double title_w = (double)u8_len(h->title ? h->title : "") * 7.2 + 20;
    if (W < title_w)
        W = title_w < 720 ? title_w : 720;
    if (W < 300)
        W = 300;
    double H = T + (legH > PH ? legH : PH) + bottom + 24;

    svg_open(out, "pd-heatmap", h->metric, NULL, NULL, h->title, W, H, NULL);

    char vb[48], col[8];
    for (size_t iy = 0; iy < h->ny; iy++) {
        double y = T + PH - (double)(iy + 1) * ch; /* first category at the bottom */
        for (size_t ix = 0; ix < h->nx; ix++) {
            double x = L + (double)ix * cw, v = h->v[iy * h->nx + ix];
            bool ok = isfinite(v);
            double t = vmax > vmin ? (v - vmin) / (vmax - vmin) : 0.5;
            if (ok)
                pd_svg_colour(t, col);
            pd_svg_fmt(vb, sizeof vb, v, 0);
            pd_str_printf(out,
                          "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                          "data-value=\"%s\"><title>",
                          ok ? "pd-cell" : "pd-cell-missing", x, y, cw - 1, ch - 1, ok ? col : "#e8e8e8",
                          ok ? vb : "");
            pd_html_escape(out, h->xlabel);
            pd_str_append(out, "=");
            pd_html_escape(out, h->xcats[ix]);
            pd_str_append(out, ", ");
            pd_html_escape(out, h->ylabel);
            pd_str_append(out, "=");
            pd_html_escape(out, h->ycats[iy]);
            pd_str_append(out, ": ");
            if (ok) {
                pd_str_append(out, vb);
                if (h->unit && h->unit[0]) {
                    pd_str_append(out, " ");
                    pd_html_escape(out, h->unit);
                }
            } else {
                pd_str_append(out, "no data");
            }
            pd_str_append(out, "</title></rect>");
            /* in-cell value: 3 significant digits, only where it fits */
            char lb[48];
            if (ok && fabs(v) >= 1e4)
                pd_svg_fmt_tick(lb, sizeof lb, v, 0);
            else if (ok)
                snprintf(lb, sizeof lb, "%.3g", v);
            else
                snprintf(lb, sizeof lb, "n/a");
            if (ch >= 14 && (double)strlen(lb) * 5.9 + 4 <= cw)
                pd_str_printf(out,
                              "<text class=\"pd-cell-label%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
                              "%s</text>",
                              !ok ? " pd-na" : t < 0.6 ? " pd-on-dark" : "", x + (cw - 1) / 2,
                              y + (ch - 1) / 2 + 3.5, lb);
        }
    }
    for (size_t iy = 0; iy < h->ny; iy++) {
        double y = T + PH - (double)iy * ch - ch / 2 + 3.5;
        text_at(out, "pd-tick", L - 5, y, "end", h->ycats[iy], 14);
    }
    for (size_t ix = 0; ix < h->nx; ix++) {
        double x = L + (double)ix * cw + (cw - 1) / 2, y = T + PH + 13;
        if (rotate) {
            pd_str_printf(out,
                          "<text class=\"pd-tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                          "transform=\"rotate(-45 %.1f %.1f)\">",
                          x, y, x, y);
            esc_trunc(out, h->xcats[ix], 14);
            pd_str_append(out, "</text>");
        } else {
            text_at(out, "pd-tick", x, y, "middle", h->xcats[ix], 14);
        }
    }
    text_at(out, "pd-axis-label", L + PW / 2, T + PH + bottom + 16, "middle", h->xlabel,
            (size_t)fit_chars(PW + 40));
    ylabel_at(out, 12, T + PH / 2, h->ylabel, PH + 30);

    /* colour legend: discrete steps, max at the top */
    double lx = L + PW + 18;
    enum { STEPS = 24 };
    for (int k = 0; k < STEPS; k++) {
        pd_svg_colour(1.0 - (k + 0.5) / STEPS, col);
        pd_str_printf(out,
                      "<rect class=\"pd-legend-step\" x=\"%.1f\" y=\"%.2f\" width=\"14\" height=\"%.2f\" "
                      "fill=\"%s\"/>",
                      lx, T + legH * k / STEPS, legH / STEPS + 0.3, col);
    }
    if (isfinite(vmin)) {
        text_at(out, "pd-tick", lx + 18, T + 8, "start", vmax > vmin ? hi : mid, 10);
        if (vmax > vmin) {
            text_at(out, "pd-tick", lx + 18, T + legH / 2 + 3.5, "start", mid, 10);
            text_at(out, "pd-tick", lx + 18, T + legH, "start", lo, 10);
        }
    } else {
        text_at(out, "pd-nodata", L + PW / 2, T + PH / 2, "middle", "no data", 20);
    }
    ylabel_at(out, unit_x, T + legH / 2, h->unit && h->unit[0] ? h->unit : h->metric, legH);
    pd_str_append(out, "</svg>");
}

/* ---------- bar chart ---------- */

#define REFLABEL_H 11.0 /* the reference line label's glyph height, px */

static double bar_sy(const void *ctx, double y)
{
    const double *k = ctx; /* T, PH, ymax */
    return k[0] + k[1] - y / k[2] * k[1];
}

void pd_svg_bar_chart(pd_str *out, const pd_svg_bars *b)
{
    double T = 34, PH = 180;
    double PW = (double)b->n * 10 > 358 ? (double)b->n * 10 : 358;
    if (PW > 1100)
        PW = 1100;
    double vmax = 0;
    size_t crit = SIZE_MAX;
    for (size_t i = 0; i < b->n; i++)
        if (isfinite(b->v[i]) && (crit == SIZE_MAX || b->v[i] > vmax)) {
            vmax = b->v[i];
            crit = i;
        }
    double top = vmax > b->ymax ? vmax : b->ymax;
    if (isfinite(b->refline) && b->refline > top)
        top = b->refline;
    double yt[MAX_TICKS], step;
    size_t nyt = pd_svg_nice_ticks(0, top > 0 ? top : 1, 5, yt, MAX_TICKS, &step);
    double L = left_margin(yt, nyt, step), W = L + PW + 16, H = T + PH + 46;
    double k[3] = {T, PH, nyt ? yt[nyt - 1] : 1};
    if (!(k[2] > 0))
        k[2] = 1;

    svg_open(out, "pd-bars", b->metric, NULL, b->policy, b->title, W, H, " data-y-lo=\"0\" data-data-lo=\"0\"");
    y_axis(out, yt, nyt, step, L, L + PW, bar_sy, k);
    double slot = PW / (double)(b->n ? b->n : 1);
    size_t maxch = clampz(fit_chars(slot) - 1, 1, 10);
    double last_right = -INFINITY;
    char vb[48];
    for (size_t i = 0; i < b->n; i++) {
        double x = L + (double)i * slot + slot * 0.125, w = slot * 0.75;
        double v = isfinite(b->v[i]) ? b->v[i] : 0;
        double y = bar_sy(k, v);
        pd_svg_fmt(vb, sizeof vb, b->v[i], 0);
        pd_str_printf(out,
                      "<rect class=\"pd-bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
                      "data-value=\"%s\"><title>",
                      x, y, w, T + PH - y, i == crit ? "#e15759" : "#4e79a7", vb);
        pd_html_escape(out, b->labels[i]);
        pd_str_printf(out, ": %s", vb);
        const char *unit = pd_svg_unit_of(b->metric ? b->metric : "");
        if (unit[0])
            pd_str_printf(out, " %s", unit);
        if (b->tips && b->tips[i]) {
            pd_str_append(out, ", ");
            pd_html_escape(out, b->tips[i]);
        }
        pd_str_append(out, "</title></rect>");
        /* task labels: as many as fit without overlapping */
        size_t len = u8_len(b->labels[i]);
        double lw = (double)(len < maxch ? len : maxch) * CHAR_W;
        double cx = x + w / 2;
        if (cx - lw / 2 >= last_right + 3) {
            text_at(out, "pd-tick", cx, T + PH + 14, "middle", b->labels[i], maxch < 4 ? 4 : maxch);
            last_right = cx + lw / 2;
        }
    }
    pd_str_printf(out,
                  "<path class=\"pd-axis\" d=\"M%.1f %.1fV%.1fH%.1f\" fill=\"none\" stroke=\"#333\"/>", L,
                  T, T + PH, L + PW);
    if (isfinite(b->refline)) {
        double y = bar_sy(k, b->refline);
        pd_str_printf(out,
                      "<line class=\"pd-makespan\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                      "stroke=\"#b22\" stroke-width=\"1.4\" stroke-dasharray=\"6 3\"/>",
                      L, y, L + PW, y);
        /* above the line, unless that would reach the title above the plot
         * (a makespan at the top tick): then below it, inside the plot */
        double ly = y - 4 - REFLABEL_H < T ? y + 4 + REFLABEL_H : y - 4;
        text_at(out, "pd-refline-label", L + PW - 2, ly, "end", b->reflabel ? b->reflabel : "", 40);
    }
    text_at(out, "pd-axis-label", L + PW / 2, T + PH + 33, "middle", b->xlabel, (size_t)fit_chars(PW));
    ylabel_at(out, 14, T + PH / 2, b->ylabel, PH + 20);
    pd_str_append(out, "</svg>");
}

/* ---------- box plots ---------- */

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return a < b ? -1 : a > b;
}

/* Quantile q of sorted v[0..n) by linear interpolation (R's type 7). */
static double quantile(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

void pd_svg_box_chart(pd_str *out, const pd_svg_boxes *b)
{
    double T = 34, PH = 180;
    double PW = (double)b->n * 22 > 358 ? (double)b->n * 22 : 358;
    if (PW > 1100)
        PW = 1100;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < b->n; i++)
        for (size_t k = 0; k < b->nvals[i]; k++)
            if (isfinite(b->vals[i][k])) {
                lo = fmin(lo, b->vals[i][k]);
                hi = fmax(hi, b->vals[i][k]);
            }
    bool have = isfinite(lo);
    if (!have)
        lo = 0, hi = 1;
    double yt[MAX_TICKS], step;
    size_t nyt = pd_svg_nice_ticks(lo, hi, 5, yt, MAX_TICKS, &step);
    xy_frame f = {.T = T, .PH = PH, .ylo = nyt ? yt[0] : lo, .yhi = nyt ? yt[nyt - 1] : hi};
    if (!(f.yhi > f.ylo))
        f.yhi = f.ylo + 1;
    f.L = left_margin(yt, nyt, step);
    f.PW = PW;
    double W = f.L + PW + 16, H = T + PH + 46;
    char extra[128], blo[48], bdl[48];
    snprintf(blo, sizeof blo, "%.6g", f.ylo);
    snprintf(bdl, sizeof bdl, "%.6g", have ? lo : 0);
    snprintf(extra, sizeof extra, " data-y-lo=\"%s\" data-data-lo=\"%s\"", blo, bdl);
    svg_open(out, "pd-box", b->metric, NULL, NULL, b->title, W, H, extra);
    y_axis(out, yt, nyt, step, f.L, f.L + PW, xy_sy, &f);
    /* labels are cut to 6 characters at most and thinned where they would
     * overlap, not cut to a useless "00..." */
    double slot = PW / (double)(b->n ? b->n : 1), last_right = -INFINITY;
    size_t maxch = clampz(fit_chars(slot) - 1, 6, 12);
    double *v = NULL;
    for (size_t i = 0; i < b->n; i++) {
        double cx = f.L + ((double)i + 0.5) * slot, bw = fmin(slot * 0.6, 28);
        size_t n = 0;
        double *nv = realloc(v, (b->nvals[i] + 1) * sizeof *v);
        if (!nv)
            break;
        v = nv;
        for (size_t k = 0; k < b->nvals[i]; k++)
            if (isfinite(b->vals[i][k]))
                v[n++] = b->vals[i][k];
        pd_str_printf(out, "<line class=\"pd-tickmark\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", cx,
                      T + PH, cx, T + PH + 4);
        size_t len = u8_len(b->labels[i]);
        double lw = (double)(len < maxch ? len : maxch) * CHAR_W;
        if (cx - lw / 2 >= last_right + 4) {
            text_at(out, "pd-tick", cx, T + PH + 15, "middle", b->labels[i], maxch);
            last_right = cx + lw / 2;
        }
        if (!n)
            continue;
        qsort(v, n, sizeof *v, cmp_double);
        double q1 = quantile(v, n, 0.25), med = quantile(v, n, 0.5), q3 = quantile(v, n, 0.75);
        double y1 = xy_sy(&f, q3), y3 = xy_sy(&f, q1);
        pd_str_printf(out,
                      "<path class=\"pd-whisker\" d=\"M%.1f %.1fV%.1fM%.1f %.1fV%.1f\" stroke=\"#555\" fill=\"none\"/>",
                      cx, xy_sy(&f, v[n - 1]), y1, cx, y3, xy_sy(&f, v[0]));
        pd_str_printf(out,
                      "<rect class=\"pd-boxrect\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                      "fill=\"#c6d4e6\" stroke=\"#4e79a7\"/>",
                      cx - bw / 2, y1, bw, fmax(y3 - y1, 0.5));
        pd_str_printf(out,
                      "<line class=\"pd-median\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e15759\" "
                      "stroke-width=\"2\"/>",
                      cx - bw / 2, xy_sy(&f, med), cx + bw / 2, xy_sy(&f, med));
        for (size_t k = 0; k < n; k++) {
            char bv[48];
            pd_svg_fmt(bv, sizeof bv, v[k], 0);
            pd_str_printf(out, "<circle class=\"pd-point\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"#333\"><title>",
                          cx, xy_sy(&f, v[k]));
            pd_html_escape(out, b->labels[i]);
            pd_str_printf(out, ": %s (%zu of %zu)</title></circle>", bv, k + 1, n);
        }
    }
    free(v);
    pd_str_printf(out, "<path class=\"pd-axis\" d=\"M%.1f %.1fV%.1fH%.1f\" fill=\"none\" stroke=\"#333\"/>", f.L,
                  T, T + PH, f.L + PW);
    text_at(out, "pd-axis-label", f.L + PW / 2, T + PH + 33, "middle", b->xlabel, (size_t)fit_chars(PW));
    ylabel_at(out, 14, T + PH / 2, b->ylabel, PH + 20);
    if (!have)
        text_at(out, "pd-nodata", f.L + PW / 2, T + PH / 2, "middle", "no data", 20);
    pd_str_append(out, "</svg>");
}

/* ---------- parallel coordinates ---------- */

void pd_svg_parcoords_chart(pd_str *out, const pd_svg_pc *c)
{
    size_t na = c->naxes ? c->naxes : 1;
    double W = 120.0 * (double)na + 40;
    if (W < 440)
        W = 440;
    if (W > 1000)
        W = 1000;
    double T = 50, PH = 200, L = 64, R = W - 80, H = T + PH + 24;
    double gap = na > 1 ? (R - L) / (double)(na - 1) : 0;
    char extra[128], blo[48], bdl[48];
    snprintf(blo, sizeof blo, "%.6g", c->axis_lo);
    snprintf(bdl, sizeof bdl, "%.6g", c->data_lo);
    snprintf(extra, sizeof extra, " data-y-lo=\"%s\" data-data-lo=\"%s\"", blo, bdl);
    svg_open(out, "pd-parcoords", c->metric, NULL, NULL, c->title, W, H, extra);
    /* lines first, axes and labels over them */
    for (size_t r = 0; r < c->nrows; r++) {
        const double *p = c->pos + r * c->naxes;
        double t = p[c->naxes - 1];
        if (!isfinite(t))
            continue;
        char col[8];
        pd_svg_colour(t, col);
        pd_str path = {0};
        bool pen = false;
        for (size_t a = 0; a < c->naxes; a++) {
            if (!isfinite(p[a])) {
                pen = false;
                continue;
            }
            pd_str_printf(&path, "%s%.1f %.1f", pen ? "L" : "M", L + (double)a * gap, T + PH - p[a] * PH);
            pen = true;
        }
        pd_str_printf(out,
                      "<path class=\"pd-line-path pd-pc-line\" d=\"%s\" fill=\"none\" stroke=\"%s\" "
                      "stroke-width=\"1.8\" stroke-opacity=\"0.85\"><title>",
                      path.data ? path.data : "M0 0", col);
        pd_html_escape(out, c->tips && c->tips[r] ? c->tips[r] : "");
        pd_str_append(out, "</title></path>");
        pd_str_free(&path);
    }
    size_t maxch = clampz(fit_chars(gap > 0 ? gap - 12 : 100), 3, 14);
    for (size_t a = 0; a < c->naxes; a++) {
        const pd_svg_pc_axis *ax = &c->axes[a];
        double x = L + (double)a * gap;
        pd_str_printf(out, "<line class=\"pd-pc-axis\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                           "stroke=\"#333\"/>",
                      x, T, x, T + PH);
        /* the last axis has the chart's right margin for its labels */
        size_t room = a + 1 == c->naxes ? clampz(fit_chars(W - x - 12), 3, 14) : maxch;
        text_at(out, "pd-axis-label", x, T - 12, "middle", ax->name, maxch);
        double last_y = INFINITY;
        for (size_t k = 0; k < ax->nticks; k++) {
            double y = T + PH - ax->tick_pos[k] * PH;
            pd_str_printf(out, "<line class=\"pd-tickmark\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
                          x - 3, y, x + 3, y);
            if (last_y - y < 13)
                continue; /* would overlap the label below */
            text_at(out, "pd-tick", x + 5, y + 3.5, "start", ax->tick_labels[k], room);
            last_y = y;
        }
    }
    pd_str_append(out, "</svg>");
}
