/* uPlot (npm package uplot, MIT), embedded at build time: the definitions
 * are generated into $(BUILD)/gen/uplot_assets.c by scripts/uplot-assets.sh
 * (mk/report.mk), never kept in the repository. Without the package (registry
 * unreachable, UPLOT=off) pd_uplot_embedded is 0, the arrays are empty and
 * pd_uplot_missing says why; the report then stays static SVG. */
#ifndef PD_REPORT_UPLOT_ASSETS_H
#define PD_REPORT_UPLOT_ASSETS_H

#include <stddef.h>

extern const int pd_uplot_embedded;
extern const char pd_uplot_version[];
extern const char pd_uplot_missing[];
/* dist/uPlot.iife.min.js, dist/uPlot.min.css, LICENSE; NUL-terminated */
extern const unsigned char pd_uplot_js[], pd_uplot_css[], pd_uplot_license[];
extern const size_t pd_uplot_js_len, pd_uplot_css_len, pd_uplot_license_len;

#endif
