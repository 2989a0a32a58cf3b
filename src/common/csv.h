/* RFC 4180 CSV: the one reader for the trace/result files the project reads
 * back (summary, report, tables), as a whole-file table (pd_csv_load) or as a
 * streaming row iterator (pd_csv_reader) for large traces, and a field writer
 * that quotes only when needed.
 *
 * Both readers share one in-place splitter: a field is a pointer into the
 * text, no field is allocated on its own. Records end at LF, CRLF or a lone
 * CR; quoted fields may hold commas, "" for a quote, and line breaks. A quote
 * opens a quoted field only as the field's first character. Blank lines are
 * skipped (a table's first line is its header even when blank), and a UTF-8
 * byte order mark at the start of the text is ignored. */
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
 * number of fields: callers decide what is malformed. The whole table is
 * three allocations (text, field pointers, rows), freed by pd_csv_free. */
pd_csv *pd_csv_load(const char *path, char *err, size_t errlen);
/* Same, from a NUL-terminated buffer. */
pd_csv *pd_csv_parse(const char *text, char *err, size_t errlen);
void pd_csv_free(pd_csv *csv);

/* Column index by header name (the first of that name), or -1. */
int pd_csv_col(const pd_csv *csv, const char *name);
/* Same for a header row read with pd_csv_reader. */
int pd_csv_row_col(const pd_csv_row *header, const char *name);
/* Field of a row, or NULL when the row is shorter than col (or col < 0). */
const char *pd_csv_get(const pd_csv *csv, size_t row, int col);

/* Streaming reader: reads a file in blocks and yields one record at a time,
 * split in place in a reused buffer, so memory stays at about one block (or
 * the longest record, if longer) whatever the file size. The reader has no
 * notion of a header: the first record is the caller's header. */
typedef struct pd_csv_reader pd_csv_reader;

/* Block size used when pd_csv_reader_open is given 0. */
#define PD_CSV_READER_BLOCK (64 * 1024)

/* Opens path; block_size 0 picks PD_CSV_READER_BLOCK (small sizes are for
 * tests). NULL with err naming the file on failure. */
pd_csv_reader *pd_csv_reader_open(const char *path, size_t block_size, char *err,
                                  size_t errlen);
/* Next non-blank record into row. Its fields are NUL-terminated, writable
 * and stay valid until the next call or close. Returns 1 for a record, 0 at
 * the end of the file, -1 with err (file, line, reason: unterminated quoted
 * field, read error, out of memory); after -1 the reader only returns -1. */
int pd_csv_reader_next(pd_csv_reader *r, pd_csv_row *row, char *err, size_t errlen);
/* Append-only files a writer may have cut short (trace CSVs: a failed or
 * interrupted write): with on, a last record without a line end is not
 * returned (a row cut inside its last field would parse as a whole row with
 * a wrong value), and pd_csv_reader_dropped says so. Off by default. */
void pd_csv_reader_complete_lines(pd_csv_reader *r, bool on);
/* 1 when a cut last record was left out. */
int pd_csv_reader_dropped(const pd_csv_reader *r);
/* Line number (1-based) where the last record returned starts. */
size_t pd_csv_reader_line(const pd_csv_reader *r);
void pd_csv_reader_close(pd_csv_reader *r);

/* Appends one field, quoted when it holds ',', '"', CR or LF. */
void pd_csv_put_field(pd_str *out, const char *field);

#endif
