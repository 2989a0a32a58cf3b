#include "common/csv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* In-place record splitter shared by pd_csv_parse and pd_csv_reader   */
/* ------------------------------------------------------------------ */

/* Growable array of field pointers into the text. */
typedef struct {
    char **v;
    size_t n, cap;
} field_vec;

static bool fv_grow(field_vec *f)
{
    size_t ncap = f->cap ? f->cap * 2 : 64;
    char **v = realloc(f->v, ncap * sizeof *v);
    if (!v)
        return false;
    f->v = v;
    f->cap = ncap;
    return true;
}

static inline bool fv_push(field_vec *f, char *field)
{
    if (f->n == f->cap && !fv_grow(f))
        return false;
    f->v[f->n++] = field;
    return true;
}

typedef enum {
    SPLIT_RECORD,       /* one record split; fields appended */
    SPLIT_END,          /* no text left */
    SPLIT_MORE,         /* the record may go on past the text: read more */
    SPLIT_UNTERMINATED, /* a quoted field runs to the end of the text */
    SPLIT_NOMEM,
} split_status;

static const char BOM[3] = {'\xEF', '\xBB', '\xBF'};

/* Where the next record starts after its terminator at term (LF, CR, CRLF,
 * or the end of the text). */
static char *after_terminator(char *term, const char *end)
{
    if (term == end)
        return term;
    if (*term == '\r' && term[1] == '\n')
        return term + 2;
    return term + 1;
}

/* Splits a record that holds a quote: first finds its end without writing
 * (so SPLIT_MORE leaves the text as it was), then unquotes in place. */
static split_status split_quoted(char *p, char *end, bool eof, field_vec *out, char **next,
                                 size_t *lines)
{
    size_t breaks = 0;
    bool field_start = true, in_quotes = false;
    char *r = p;
    for (;; r++) {
        if (r == end) {
            if (!eof)
                return SPLIT_MORE;
            if (in_quotes)
                return SPLIT_UNTERMINATED;
            break;
        }
        char c = *r;
        if (in_quotes) {
            if (c == '"') {
                if (r + 1 == end && !eof)
                    return SPLIT_MORE; /* "" or a closing quote: not known yet */
                if (r[1] == '"')
                    r++;
                else
                    in_quotes = false;
            } else if (c == '\n') {
                breaks++;
            }
            continue;
        }
        if (c == '"' && field_start) {
            in_quotes = true;
            field_start = false;
            continue;
        }
        if (c == '\n' || c == '\r')
            break;
        field_start = c == ',';
    }
    char *term = r;
    if (term < end && *term == '\r' && term + 1 == end && !eof)
        return SPLIT_MORE; /* CR, maybe the first half of CRLF */
    char *after = after_terminator(term, end);

    char *w = p;
    field_start = true;
    in_quotes = false;
    if (!fv_push(out, w))
        return SPLIT_NOMEM;
    for (r = p; r < term; r++) {
        char c = *r;
        if (in_quotes) {
            if (c == '"') {
                if (r[1] != '"') {
                    in_quotes = false;
                    continue;
                }
                r++;
            }
            *w++ = c;
            continue;
        }
        if (c == '"' && field_start) {
            in_quotes = true;
            field_start = false;
            continue;
        }
        if (c == ',') {
            *w++ = '\0';
            if (!fv_push(out, w))
                return SPLIT_NOMEM;
            field_start = true;
            continue;
        }
        field_start = false;
        *w++ = c;
    }
    *w = '\0';
    *next = after;
    *lines += breaks + 1;
    return SPLIT_RECORD;
}

/* Splits the record starting at p in place, appending its fields to out.
 * *end must be writable and hold NUL: a record ended by the end of the text
 * gets its terminator there. Without eof, a record that may continue past
 * end gives SPLIT_MORE and the text is left unchanged. On SPLIT_RECORD,
 * *next is where the following record starts and *lines counts the line
 * breaks consumed. */
static split_status split_record(char *p, char *end, bool eof, field_vec *out, char **next,
                                 size_t *lines)
{
    if (p == end)
        return eof ? SPLIT_END : SPLIT_MORE;
    char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl && !eof)
        return SPLIT_MORE;
    char *le = nl ? nl : end;
    if (memchr(p, '"', (size_t)(le - p)))
        return split_quoted(p, end, eof, out, next, lines);

    /* the common case: no quote up to the line feed */
    if (!fv_push(out, p))
        return SPLIT_NOMEM;
    char *s = p;
    for (; s < le; s++) {
        if (*s == ',') {
            *s = '\0';
            if (!fv_push(out, s + 1))
                return SPLIT_NOMEM;
        } else if (*s == '\r') {
            break; /* CRLF, or a lone CR ending the record */
        }
    }
    *next = after_terminator(s, end);
    *s = '\0';
    *lines += 1;
    return SPLIT_RECORD;
}

static bool is_blank(const field_vec *f, size_t first)
{
    return f->n - first == 1 && f->v[first][0] == '\0';
}

/* ------------------------------------------------------------------ */
/* Whole-file tables                                                  */
/* ------------------------------------------------------------------ */

/* The table and what its fields point into. */
typedef struct {
    pd_csv pub;
    char *text;
    char **fields; /* header's, then every row's, in order */
} csv_table;

/* Splits text[0, len) (NUL at text[len]) into a table that takes ownership
 * of text; text is freed on failure too. */
static pd_csv *parse_owned(char *text, size_t len, char *err, size_t errlen)
{
    csv_table *t = calloc(1, sizeof *t);
    field_vec fv = {0};
    pd_csv_row *rows = NULL;
    size_t nrows = 0, cap = 0, line = 1;
    char *p = text, *end = text + len;
    if (!t)
        goto nomem;
    if (len >= 3 && memcmp(p, BOM, 3) == 0)
        p += 3;
    for (;;) {
        size_t first = fv.n;
        split_status st = split_record(p, end, true, &fv, &p, &line);
        if (st == SPLIT_END) {
            if (first == 0) {
                snprintf(err, errlen, "empty file (no header)");
                goto fail;
            }
            break;
        }
        if (st == SPLIT_NOMEM)
            goto nomem;
        if (st == SPLIT_UNTERMINATED) {
            /* worded as before: callers show it as is */
            snprintf(err, errlen, "unterminated quoted field");
            goto fail;
        }
        if (first == 0) { /* the header, even when blank */
            t->pub.header.nfields = fv.n;
            continue;
        }
        if (is_blank(&fv, first)) {
            fv.n = first;
            continue;
        }
        if (nrows == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            pd_csv_row *r = realloc(rows, ncap * sizeof *r);
            if (!r)
                goto nomem;
            rows = r;
            cap = ncap;
        }
        /* pointers are set once fv stops moving */
        rows[nrows++] = (pd_csv_row){NULL, fv.n - first};
    }
    t->text = text;
    t->fields = fv.v;
    t->pub.header.fields = fv.v;
    size_t at = t->pub.header.nfields;
    for (size_t i = 0; i < nrows; i++) {
        rows[i].fields = fv.v + at;
        at += rows[i].nfields;
    }
    t->pub.rows = rows;
    t->pub.nrows = nrows;
    return &t->pub;
nomem:
    snprintf(err, errlen, "out of memory");
fail:
    free(fv.v);
    free(rows);
    free(text);
    free(t);
    return NULL;
}

pd_csv *pd_csv_parse(const char *text, char *err, size_t errlen)
{
    size_t len = strlen(text);
    char *copy = malloc(len + 1);
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    memcpy(copy, text, len + 1);
    return parse_owned(copy, len, err, errlen);
}

pd_csv *pd_csv_load(const char *path, char *err, size_t errlen)
{
    char *text = pd_read_file(path, NULL);
    if (!text) {
        snprintf(err, errlen, "%s: %s", path, pd_read_strerror(errno));
        return NULL;
    }
    char inner[256];
    /* the text ends at its first NUL, as for pd_csv_parse */
    pd_csv *csv = parse_owned(text, strlen(text), inner, sizeof inner);
    if (!csv)
        snprintf(err, errlen, "%s: %s", path, inner);
    return csv;
}

void pd_csv_free(pd_csv *csv)
{
    if (!csv)
        return;
    csv_table *t = (csv_table *)csv;
    free(t->pub.rows);
    free(t->fields);
    free(t->text);
    free(t);
}

int pd_csv_row_col(const pd_csv_row *header, const char *name)
{
    for (size_t i = 0; i < header->nfields; i++)
        if (strcmp(header->fields[i], name) == 0)
            return (int)i;
    return -1;
}

int pd_csv_col(const pd_csv *csv, const char *name) { return pd_csv_row_col(&csv->header, name); }

const char *pd_csv_get(const pd_csv *csv, size_t row, int col)
{
    if (col < 0 || row >= csv->nrows || (size_t)col >= csv->rows[row].nfields)
        return NULL;
    return csv->rows[row].fields[col];
}

/* ------------------------------------------------------------------ */
/* Streaming reader                                                   */
/* ------------------------------------------------------------------ */

struct pd_csv_reader {
    int fd;
    char *path;
    char *buf; /* cap bytes of text + the NUL sentinel */
    size_t cap;
    char *pos, *end; /* unread text */
    bool eof, bom_checked, failed;
    bool complete_lines, tail_terminated, dropped;
    size_t line, record_line;
    field_vec fields;
    char msg[320]; /* the error, repeated by later calls */
};

pd_csv_reader *pd_csv_reader_open(const char *path, size_t block_size, char *err,
                                  size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: %s", path, strerror(EISDIR));
        close(fd);
        return NULL;
    }
    pd_csv_reader *r = calloc(1, sizeof *r);
    size_t cap = block_size ? block_size : PD_CSV_READER_BLOCK;
    if (r) {
        r->path = pd_strdup(path);
        r->buf = malloc(cap + 1);
    }
    if (!r || !r->path || !r->buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        if (r) {
            free(r->path);
            free(r->buf);
        }
        free(r);
        close(fd);
        return NULL;
    }
    r->fd = fd;
    r->cap = cap;
    r->pos = r->end = r->buf;
    *r->end = '\0';
    r->line = r->record_line = 1;
    return r;
}

/* Keeps the unread text, moved to the front of the buffer (which doubles
 * when that text fills it: a record longer than a block), and reads until
 * the buffer is full or the file ends. */
static bool refill(pd_csv_reader *r)
{
    size_t keep = (size_t)(r->end - r->pos);
    if (keep == r->cap) {
        size_t ncap = r->cap * 2;
        char *b = realloc(r->buf, ncap + 1);
        if (!b) {
            snprintf(r->msg, sizeof r->msg, "%s: out of memory (record from line %zu)", r->path,
                     r->line);
            return false;
        }
        r->pos = b + (r->pos - r->buf);
        r->buf = b;
        r->cap = ncap;
    }
    if (r->pos != r->buf && keep > 0)
        memmove(r->buf, r->pos, keep);
    r->pos = r->buf;
    r->end = r->buf + keep;
    while (r->end < r->buf + r->cap) {
        ssize_t n = read(r->fd, r->end, (size_t)(r->buf + r->cap - r->end));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *r->end = '\0';
            snprintf(r->msg, sizeof r->msg, "%s: read error near line %zu: %s", r->path, r->line,
                     strerror(errno));
            return false;
        }
        if (n == 0) {
            r->eof = true;
            /* the file's last byte: does its last record have a line end? */
            r->tail_terminated = r->end == r->buf || r->end[-1] == '\n' || r->end[-1] == '\r';
            break;
        }
        r->end += n;
    }
    *r->end = '\0';
    return true;
}

int pd_csv_reader_next(pd_csv_reader *r, pd_csv_row *row, char *err, size_t errlen)
{
    while (!r->failed) {
        if (!r->bom_checked) {
            if (r->end - r->pos < 3 && !r->eof) {
                r->failed = !refill(r);
                continue;
            }
            if (r->end - r->pos >= 3 && memcmp(r->pos, BOM, 3) == 0)
                r->pos += 3;
            r->bom_checked = true;
        }
        r->fields.n = 0;
        char *next;
        size_t line = r->line;
        switch (split_record(r->pos, r->end, r->eof, &r->fields, &next, &line)) {
        case SPLIT_RECORD:
            r->record_line = r->line;
            r->line = line;
            r->pos = next;
            if (is_blank(&r->fields, 0))
                continue;
            if (r->complete_lines && r->eof && next == r->end && !r->tail_terminated) {
                r->dropped = true; /* cut short by its writer */
                return 0;
            }
            row->fields = r->fields.v;
            row->nfields = r->fields.n;
            return 1;
        case SPLIT_END:
            return 0;
        case SPLIT_MORE:
            r->failed = !refill(r);
            continue;
        case SPLIT_UNTERMINATED:
            snprintf(r->msg, sizeof r->msg, "%s: unterminated quoted field (record from line %zu)",
                     r->path, r->line);
            break;
        case SPLIT_NOMEM:
            snprintf(r->msg, sizeof r->msg, "%s: out of memory (record from line %zu)", r->path,
                     r->line);
            break;
        }
        r->failed = true;
    }
    snprintf(err, errlen, "%s", r->msg);
    return -1;
}

size_t pd_csv_reader_line(const pd_csv_reader *r) { return r->record_line; }

void pd_csv_reader_complete_lines(pd_csv_reader *r, bool on) { r->complete_lines = on; }

int pd_csv_reader_dropped(const pd_csv_reader *r) { return r->dropped; }

void pd_csv_reader_close(pd_csv_reader *r)
{
    if (!r)
        return;
    close(r->fd);
    free(r->fields.v);
    free(r->buf);
    free(r->path);
    free(r);
}

/* ------------------------------------------------------------------ */
/* Writer                                                             */
/* ------------------------------------------------------------------ */

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
