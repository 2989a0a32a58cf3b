#include "common/csv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool row_push(pd_csv_row *row, size_t *cap, char *field)
{
    if (row->nfields == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        char **p = realloc(row->fields, ncap * sizeof *p);
        if (!p)
            return false;
        row->fields = p;
        *cap = ncap;
    }
    row->fields[row->nfields++] = field;
    return true;
}

static void row_free(pd_csv_row *row)
{
    for (size_t i = 0; i < row->nfields; i++)
        free(row->fields[i]);
    free(row->fields);
    row->fields = NULL;
    row->nfields = 0;
}

/* Parses one record starting at *pp; advances past its line end.
 * Returns 1 for a record, 0 at end of text, -1 on error. */
static int parse_record(const char **pp, pd_csv_row *row, char *err, size_t errlen)
{
    const char *p = *pp;
    if (*p == '\0')
        return 0;
    size_t cap = 0;
    pd_str field = {0};
    bool in_quotes = false, was_quoted = false;
    for (;;) {
        char c = *p;
        if (in_quotes) {
            if (c == '\0') {
                snprintf(err, errlen, "unterminated quoted field");
                pd_str_free(&field);
                return -1;
            }
            if (c == '"') {
                if (p[1] == '"') {
                    pd_str_appendn(&field, "\"", 1);
                    p += 2;
                    continue;
                }
                in_quotes = false;
                p++;
                continue;
            }
            pd_str_appendn(&field, p, 1);
            p++;
            continue;
        }
        if (c == '"' && field.len == 0 && !was_quoted) {
            in_quotes = was_quoted = true;
            p++;
            continue;
        }
        if (c == ',' || c == '\n' || c == '\r' || c == '\0') {
            char *f = pd_str_take(&field);
            if (!f || !row_push(row, &cap, f)) {
                free(f);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            was_quoted = false;
            if (c == ',') {
                p++;
                continue;
            }
            if (c == '\r')
                p++;
            if (*p == '\n')
                p++;
            *pp = p;
            return 1;
        }
        pd_str_appendn(&field, p, 1);
        p++;
    }
}

pd_csv *pd_csv_parse(const char *text, char *err, size_t errlen)
{
    pd_csv *csv = calloc(1, sizeof *csv);
    if (!csv) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    const char *p = text;
    int rc = parse_record(&p, &csv->header, err, errlen);
    if (rc <= 0) {
        if (rc == 0)
            snprintf(err, errlen, "empty file (no header)");
        pd_csv_free(csv);
        return NULL;
    }
    size_t cap = 0;
    for (;;) {
        pd_csv_row row = {0};
        rc = parse_record(&p, &row, err, errlen);
        if (rc < 0) {
            row_free(&row);
            pd_csv_free(csv);
            return NULL;
        }
        if (rc == 0)
            break;
        if (row.nfields == 1 && row.fields[0][0] == '\0') { /* blank line */
            row_free(&row);
            continue;
        }
        if (csv->nrows == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            pd_csv_row *r = realloc(csv->rows, ncap * sizeof *r);
            if (!r) {
                row_free(&row);
                pd_csv_free(csv);
                snprintf(err, errlen, "out of memory");
                return NULL;
            }
            csv->rows = r;
            cap = ncap;
        }
        csv->rows[csv->nrows++] = row;
    }
    return csv;
}

pd_csv *pd_csv_load(const char *path, char *err, size_t errlen)
{
    char *text = pd_read_file(path, NULL);
    if (!text) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char inner[256];
    pd_csv *csv = pd_csv_parse(text, inner, sizeof inner);
    free(text);
    if (!csv)
        snprintf(err, errlen, "%s: %s", path, inner);
    return csv;
}

void pd_csv_free(pd_csv *csv)
{
    if (!csv)
        return;
    row_free(&csv->header);
    for (size_t i = 0; i < csv->nrows; i++)
        row_free(&csv->rows[i]);
    free(csv->rows);
    free(csv);
}

int pd_csv_col(const pd_csv *csv, const char *name)
{
    for (size_t i = 0; i < csv->header.nfields; i++)
        if (strcmp(csv->header.fields[i], name) == 0)
            return (int)i;
    return -1;
}

const char *pd_csv_get(const pd_csv *csv, size_t row, int col)
{
    if (col < 0 || row >= csv->nrows || (size_t)col >= csv->rows[row].nfields)
        return NULL;
    return csv->rows[row].fields[col];
}

void pd_csv_put_field(pd_str *out, const char *field)
{
    if (!strpbrk(field, ",\"\r\n")) {
        pd_str_append(out, field);
        return;
    }
    pd_str_appendn(out, "\"", 1);
    for (const char *p = field; *p; p++) {
        if (*p == '"')
            pd_str_appendn(out, "\"", 1);
        pd_str_appendn(out, p, 1);
    }
    pd_str_appendn(out, "\"", 1);
}
