/* GPU sampler formatting: nvidia-smi's csv,noheader,nounits lines to trace
 * rows. Values are passed through as printed; the summary decides what is
 * numeric ([N/A] rows are dropped there, not here). The name gets "NVIDIA "
 * in front when it lacks it (older boards: "Tesla V100-SXM2-16GB"). */
#include "probe/sample.h"

#include <stdio.h>
#include <string.h>

#include "common/csv.h"
#include "probe/gpu_source.h"

#define GPU_FIELDS 10

int pd_gpu_format(const char *smi_out, double ts, const char *host, pd_str *out)
{
    int rows = 0;
    char line[1024];
    for (const char *p = smi_out ? smi_out : ""; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *next = nl ? nl + 1 : p + n;
        if (n >= sizeof line) { /* no sane GPU line is this long */
            p = next;
            continue;
        }
        memcpy(line, p, n);
        line[n] = '\0';
        p = next;
        if (n > 0 && line[n - 1] == '\r')
            line[--n] = '\0';

        /* Split on ", " (names contain single spaces). */
        char *f[64];
        size_t nf = 0;
        char *s = line;
        f[nf++] = s;
        while ((s = strstr(s, ", ")) && nf < PD_ARRAY_LEN(f)) {
            *s = '\0';
            s += 2;
            f[nf++] = s;
        }
        if (nf < GPU_FIELDS)
            continue;
        /* Extra fields can only come from a name holding ", ": glue them back. */
        size_t extra = nf - GPU_FIELDS;
        for (size_t i = 0; i < extra; i++)
            f[1][strlen(f[1])] = ','; /* restores ", " since the ' ' is still there */

        char head[128];
        snprintf(head, sizeof head, "%.3f,%s,", ts, host);
        pd_str_append(out, head);
        pd_csv_put_field(out, f[0]);
        pd_str_append(out, ",");
        char name[160]; /* the vendor in the name, as every GPU source writes it */
        pd_gpu_vendor_name(name, sizeof name, "NVIDIA", f[1]);
        pd_csv_put_field(out, name);
        for (size_t i = 2 + extra; i < nf; i++) {
            pd_str_append(out, ",");
            pd_csv_put_field(out, f[i]);
        }
        pd_str_append(out, "\n");
        rows++;
    }
    return rows;
}
