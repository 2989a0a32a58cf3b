#include "common/duration.h"

#include <math.h>
#include <stdio.h>

void pd_fmt_duration(char *buf, size_t len, double s)
{
    if (!(s >= 0))
        s = 0;
    if (s < 60)
        snprintf(buf, len, "%.1f s", s);
    else if (s < 3600)
        snprintf(buf, len, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, len, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

double pd_eta_s(double elapsed, size_t done, size_t total)
{
    if (done == 0)
        return -1;
    return total > done ? elapsed / (double)done * (double)(total - done) : 0;
}
