/* RFC 4180 CSV: a loader for the trace/result files the project reads back
 * (summary, report) and a field writer that quotes only when needed. */
#ifndef PD_COMMON_CSV_H
#define PD_COMMON_CSV_H

#include <stddef.h>

#include "common/util.h"

typedef struct {
    char **fields;
    size_t nfields;
} pd_csv_row;

typedef struct {
    pd_csv_row header;
    pd_csv_row *rows;
    size_t nrows;
} pd_csv;

/* Loads a file whose first line is a header. Returns NULL and fills err on
 * failure (missing file, empty file, unterminated quote). Rows may have any
 * number of fields: callers decide what is malformed. */
pd_csv *pd_csv_load(const char *path, char *err, size_t errlen);
/* Same, from a NUL-terminated buffer. */
pd_csv *pd_csv_parse(const char *text, char *err, size_t errlen);
void pd_csv_free(pd_csv *csv);

/* Column index by header name, or -1. */
int pd_csv_col(const pd_csv *csv, const char *name);
/* Field of a row, or NULL when the row is shorter than col (or col < 0). */
const char *pd_csv_get(const pd_csv *csv, size_t row, int col);

/* Appends one field, quoted when it holds ',', '"', CR or LF. */
void pd_csv_put_field(pd_str *out, const char *field);

#endif
