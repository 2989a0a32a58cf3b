/* Internal to the report module: the page being assembled and its sections.
 * report.c owns the skeleton; summary.c the first screen (best results,
 * variable impact); plots.c the per-variable plots and heatmaps; traces.c the
 * trace time series and per-task bars; interactive.c the uPlot charts. */
#ifndef PD_REPORT_PAGE_H
#define PD_REPORT_PAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/util.h"
#include "report/data.h"

/* Caps that keep a huge study's page usable (the rest is named in a note). */
#define PD_PAGE_MAX_EXECS_TS 40     /* executions with time series */
#define PD_PAGE_MAX_EXECS_TASKS 40  /* executions with per-task bars */
#define PD_PAGE_MAX_OVERVIEW 200    /* rows of the executions table */
#define PD_PAGE_MAX_HEAT_PAIRS 3    /* variable pairs with heatmaps */
#define PD_PAGE_MAX_HEAT_CATS 40    /* values per heatmap axis */
#define PD_PAGE_TS_BUCKETS 400      /* downsampling buckets per series */

typedef struct {
    pd_str *out;
    const char *run_dir;
    pd_rep_run run;
    char **vars; /* variables: params keys, else inferred */
    size_t nvars;
    const char *vars_origin; /* how vars were found, for the page */
    pd_rep_table results, summary;
    bool have_results, have_summary;
    char results_err[512], summary_err[512];
    size_t n_live; /* time-series figures that carry data for uPlot */
} pd_page;

/* <p class="pd-note CLS">text</p>, text formatted then HTML-escaped. */
void pd_page_note(pd_page *pg, const char *cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void pd_page_fig_open(pd_page *pg);
/* Closes the figure with an escaped caption (NULL = none). */
void pd_page_fig_close(pd_page *pg, const char *caption);
/* "a=1, b=x" of an execution's params (escaped into out). */
void pd_page_exec_vars(pd_page *pg, const pd_rep_exec *ex);

/* The swept variables of t (two values or more), in column order, without
 * the derived ones (derived_of[v] >= 0: v follows that variable; sized
 * t->nvars). Returns the count written to swept (sized t->nvars). */
size_t pd_page_swept_vars(const pd_rep_table *t, size_t *swept, long *derived_of);

/* Interactive time series (interactive.c): uPlot's CSS for <head> and its
 * script for the end of <body> (nothing when built without uPlot); whether
 * uPlot is in this build, and why not (empty when it is). */
void pd_page_live_head(pd_page *pg);
void pd_page_live_scripts(pd_page *pg);
bool pd_page_live(void);
const char *pd_page_live_missing(void);
/* Opens the figure of a time-series chart of set, carrying its series as
 * JSON for the script (a plain figure without uPlot); its x axis starts at 0
 * and reaches t_end at least, as the SVG's. */
void pd_page_ts_fig_open(pd_page *pg, const pd_rep_tsset *set, double t_end, const char *title,
                         const char *xlabel, const char *ylabel, double y_top);

void pd_page_section_summary(pd_page *pg);
void pd_page_section_plots(pd_page *pg);
void pd_page_section_heatmaps(pd_page *pg);
void pd_page_section_traces(pd_page *pg);
void pd_page_section_tasks(pd_page *pg);

#endif
