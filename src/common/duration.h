/* Durations for progress lines (paddiser sim study -v, paddiser bench
 * --progress): one format everywhere. */
#ifndef PD_COMMON_DURATION_H
#define PD_COMMON_DURATION_H

#include <stddef.h>

/* "12.3 s" under a minute, "2m05s" up to an hour, "3h07m" above. */
void pd_fmt_duration(char *buf, size_t len, double s);

/* The time left when done of total steps took elapsed seconds, assuming the
 * rest cost the mean so far; negative when nothing is done yet. */
double pd_eta_s(double elapsed, size_t done, size_t total);

#endif
