/* Tests of src/common: CSV parsing/writing, strict number parsing, strings. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "common/csv.h"
#include "common/sysroot.h"
#include "common/util.h"

static void test_csv_quotes_and_short_rows(void **state)
{
    (void)state;
    char err[128];
    pd_csv *c = pd_csv_parse("a,b,c\n1,\"x, \"\"y\"\"\",3\r\n\n4,5\n", err, sizeof err);
    assert_non_null(c);
    assert_int_equal(c->nrows, 2);
    assert_int_equal(pd_csv_col(c, "b"), 1);
    assert_int_equal(pd_csv_col(c, "zz"), -1);
    assert_string_equal(pd_csv_get(c, 0, 1), "x, \"y\"");
    assert_string_equal(pd_csv_get(c, 1, 1), "5");
    assert_null(pd_csv_get(c, 1, 2)); /* short row */
    pd_csv_free(c);
}

static void test_csv_errors(void **state)
{
    (void)state;
    char err[128];
    assert_null(pd_csv_parse("", err, sizeof err));
    assert_non_null(strstr(err, "empty"));
    assert_null(pd_csv_parse("a\n\"open", err, sizeof err));
    assert_non_null(strstr(err, "unterminated"));
    assert_null(pd_csv_load("/nonexistent/x.csv", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/x.csv"));
}

/* ---- streaming reader ---- */

/* Writes content to a fresh temp file; returns its path (caller frees). */
static char *temp_csv(const char *content, size_t len)
{
    char *path = strdup("/tmp/pd_common_csv_XXXXXX");
    assert_non_null(path);
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, content, len), (ssize_t)len);
    close(fd);
    return path;
}

static void remove_temp(char *path)
{
    unlink(path);
    free(path);
}

/* Reads every record of path with the given block size into one string:
 * fields joined by '|', records ended by ';'. Returns the reader's status. */
static int read_all(const char *path, size_t block, pd_str *out, char *err, size_t errlen)
{
    pd_csv_reader *r = pd_csv_reader_open(path, block, err, errlen);
    assert_non_null(r);
    pd_csv_row row;
    int rc;
    while ((rc = pd_csv_reader_next(r, &row, err, errlen)) > 0) {
        for (size_t i = 0; i < row.nfields; i++) {
            if (i)
                pd_str_append(out, "|");
            pd_str_append(out, row.fields[i]);
        }
        pd_str_append(out, ";");
    }
    pd_csv_reader_close(r);
    return rc;
}

static void test_reader_quoted_field_spanning_lines(void **state)
{
    (void)state;
    static const char text[] = "name,note\n"
                               "a,\"line one\nline two, \"\"quoted\"\"\r\nline three\"\n"
                               "b,plain\n";
    char *path = temp_csv(text, sizeof text - 1);
    char err[256];
    /* tiny blocks put the block boundary inside the quoted field */
    for (size_t block = 1; block <= 24; block++) {
        pd_str s = {0};
        assert_int_equal(read_all(path, block, &s, err, sizeof err), 0);
        assert_string_equal(s.data, "name|note;"
                                    "a|line one\nline two, \"quoted\"\r\nline three;"
                                    "b|plain;");
        pd_str_free(&s);
    }
    /* line numbers count the breaks inside the quoted field */
    pd_csv_reader *r = pd_csv_reader_open(path, 4, err, sizeof err);
    pd_csv_row row;
    assert_int_equal(pd_csv_reader_next(r, &row, err, sizeof err), 1);
    assert_int_equal(pd_csv_reader_line(r), 1);
    assert_int_equal(pd_csv_reader_next(r, &row, err, sizeof err), 1);
    assert_int_equal(pd_csv_reader_line(r), 2);
    assert_int_equal(pd_csv_reader_next(r, &row, err, sizeof err), 1);
    assert_string_equal(row.fields[0], "b");
    assert_int_equal(pd_csv_reader_line(r), 5);
    assert_int_equal(pd_csv_reader_next(r, &row, err, sizeof err), 0);
    pd_csv_reader_close(r);
    remove_temp(path);
}

/* A trace row cut short by a failed write (issue #13): with complete lines
 * on, a last record without a line end is left out whatever the block size
 * (it parsed as a whole row: a memory peak of 15.259 GB instead of 7.629);
 * off, it is a record like any other. */
static void test_reader_complete_lines(void **state)
{
    (void)state;
    static const char cut[] = "t,mem_gb\n1,7.629\n2,15.2";
    static const char whole[] = "t,mem_gb\n1,7.629\n2,15.2\n";
    static const char quoted[] = "t,note\n1,\"a\nb\"\n2,\"c\nd\"";
    char *pc = temp_csv(cut, sizeof cut - 1), *pw = temp_csv(whole, sizeof whole - 1);
    char *pq = temp_csv(quoted, sizeof quoted - 1);
    char err[256];
    for (size_t block = 1; block <= 32; block++) {
        for (int on = 0; on <= 1; on++) {
            const char *paths[] = {pc, pw, pq};
            const char *want[2][3] = {{"t|mem_gb;1|7.629;2|15.2;", "t|mem_gb;1|7.629;2|15.2;", "t|note;1|a\nb;2|c\nd;"},
                                      {"t|mem_gb;1|7.629;", "t|mem_gb;1|7.629;2|15.2;", "t|note;1|a\nb;"}};
            for (int f = 0; f < 3; f++) {
                pd_csv_reader *r = pd_csv_reader_open(paths[f], block, err, sizeof err);
                assert_non_null(r);
                pd_csv_reader_complete_lines(r, on);
                pd_str s = {0};
                pd_csv_row row;
                int rc;
                while ((rc = pd_csv_reader_next(r, &row, err, sizeof err)) > 0) {
                    for (size_t i = 0; i < row.nfields; i++) {
                        if (i)
                            pd_str_append(&s, "|");
                        pd_str_append(&s, row.fields[i]);
                    }
                    pd_str_append(&s, ";");
                }
                assert_int_equal(rc, 0);
                assert_string_equal(s.data, want[on][f]);
                assert_int_equal(pd_csv_reader_dropped(r), on && f != 1);
                pd_str_free(&s);
                pd_csv_reader_close(r);
            }
        }
    }
    remove_temp(pc);
    remove_temp(pw);
    remove_temp(pq);
}

/* A FIFO (as a device such as /dev/null or /dev/stdout) at PATH, or a link
 * to one, is written to, not replaced: renaming over it left, as root,
 * /dev/null a regular file after `-o /dev/null`. */
static void test_write_atomic_writes_through_fifos(void **state)
{
    (void)state;
    char dir[] = "/tmp/pd-atomic-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[256], link[256];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(link, sizeof link, "%s/out", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    assert_int_equal(symlink(fifo, link), 0);
    for (int via_link = 0; via_link < 2; via_link++) {
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) { /* the reader: exit 0 when it read exactly the data */
            char buf[64] = {0};
            int fd = open(fifo, O_RDONLY);
            ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
            _exit(n == 4 && !strcmp(buf, "a,b\n") ? 0 : 1);
        }
        assert_int_equal(pd_write_file_atomic(via_link ? link : fifo, "a,b\n", 4), 0);
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        struct stat st;
        assert_int_equal(lstat(fifo, &st), 0);
        assert_true(S_ISFIFO(st.st_mode));
        assert_int_equal(lstat(link, &st), 0);
        assert_true(S_ISLNK(st.st_mode));
    }
    unlink(link);
    unlink(fifo);
    assert_int_equal(rmdir(dir), 0); /* no temporary left */
}

/* A FIFO nobody reads (one planted where a run writes results.csv): the
 * write fails with EPIPE ("Broken pipe") after the reader wait instead of
 * blocking for ever, and the FIFO stays a FIFO. */
static void test_write_atomic_fifo_without_reader_fails(void **state)
{
    (void)state;
    char dir[] = "/tmp/pd-atomic-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char fifo[256];
    snprintf(fifo, sizeof fifo, "%s/results.csv", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    pd_set_fifo_reader_wait(50);
    errno = 0;
    assert_int_equal(pd_write_file_atomic(fifo, "a,b\n", 4), -1);
    assert_int_equal(errno, EPIPE);
    pd_set_fifo_reader_wait(10000);
    struct stat st;
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    unlink(fifo);
    assert_int_equal(rmdir(dir), 0); /* no temporary left */
}

/* A file or link planted at the old temporary name PATH.tmp.<pid> is never
 * written through (issue #13: it truncated the link's target), and a link
 * at PATH itself is replaced, not followed. */
static void test_write_atomic_ignores_planted_links(void **state)
{
    (void)state;
    char dir[] = "/tmp/pd-atomic-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256], planted[300], target[256], target2[256];
    snprintf(path, sizeof path, "%s/results.csv", dir);
    snprintf(planted, sizeof planted, "%s.tmp.%ld", path, (long)getpid());
    snprintf(target, sizeof target, "%s/precious", dir);
    snprintf(target2, sizeof target2, "%s/precious2", dir);
    assert_int_equal(pd_write_file(target, "keep me\n", 8), 0);
    assert_int_equal(pd_write_file(target2, "keep me too\n", 12), 0);
    assert_int_equal(symlink(target, planted), 0);
    assert_int_equal(symlink(target2, path), 0);
    assert_int_equal(pd_write_file_atomic(path, "a,b\n1,2\n", 8), 0);
    char *t = pd_read_file(target, NULL), *t2 = pd_read_file(target2, NULL), *r = pd_read_file(path, NULL);
    assert_string_equal(t, "keep me\n");
    assert_string_equal(t2, "keep me too\n");
    assert_string_equal(r, "a,b\n1,2\n");
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0644);
    free(t);
    free(t2);
    free(r);
    /* nothing left behind but the four names */
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(n, 4);
    unlink(planted);
    unlink(path);
    unlink(target);
    unlink(target2);
    rmdir(dir);
}

static void test_reader_row_longer_than_block(void **state)
{
    (void)state;
    /* 3000 fields of 4 characters: ~15 kB in one record, read with 64-byte
     * and default blocks */
    pd_str text = {0};
    pd_str_append(&text, "h\n");
    for (int i = 0; i < 3000; i++)
        pd_str_printf(&text, "%s%04d", i ? "," : "", i);
    pd_str_append(&text, "\nlast\n");
    char *path = temp_csv(text.data, text.len);
    size_t blocks[] = {64, 0};
    for (size_t b = 0; b < PD_ARRAY_LEN(blocks); b++) {
        char err[256];
        pd_csv_reader *r = pd_csv_reader_open(path, blocks[b], err, sizeof err);
        assert_non_null(r);
        pd_csv_row row;
        assert_int_equal(pd_csv_reader_next(r, &row, err, sizeof err), 1);
        assert_int_equal(row.nfields, 1);
        assert_int_equal(pd_csv_reader_next(r, &row, err, sizeof err), 1);
        assert_int_equal(row.nfields, 3000);
        assert_string_equal(row.fields[0], "0000");
        assert_string_equal(row.fields[1234], "1234");
        assert_string_equal(row.fields[2999], "2999");
        assert_int_equal(pd_csv_reader_next(r, &row, err, sizeof err), 1);
        assert_string_equal(row.fields[0], "last");
        assert_int_equal(pd_csv_reader_next(r, &row, err, sizeof err), 0);
        pd_csv_reader_close(r);
    }
    remove_temp(path);
    pd_str_free(&text);
}

static void test_reader_no_trailing_newline_and_crlf(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"a,b\n1,2", "a|b;1|2;"},                         /* no trailing newline */
        {"a,b\n1,\"2\"", "a|b;1|2;"},                     /* ... after a quoted field */
        {"a,b\r\n1,2\r\n\r\n3,\"x\r\ny\"\r\n", "a|b;1|2;3|x\r\ny;"}, /* CRLF, blank CRLF line */
        {"a\r1\r\r2", "a;1;2;"},                          /* lone CRs end records */
        {"\xEF\xBB\xBF" "a,b\n1,2\n", "a|b;1|2;"},        /* byte order mark */
        {"\n\na\n,\n", "a;|;"},                           /* blank lines; a row of 2 empties */
        {"", ""},
    };
    for (size_t i = 0; i < PD_ARRAY_LEN(cases); i++) {
        char *path = temp_csv(cases[i].text, strlen(cases[i].text));
        for (size_t block = 1; block <= 8; block++) {
            pd_str s = {0};
            char err[256];
            assert_int_equal(read_all(path, block, &s, err, sizeof err), 0);
            if (strcmp(s.data ? s.data : "", cases[i].want) != 0)
                fail_msg("case %zu, block %zu: got '%s'", i, block, s.data ? s.data : "");
            pd_str_free(&s);
        }
        remove_temp(path);
    }
}

static void test_reader_matches_table(void **state)
{
    (void)state;
    /* every record the table holds, the reader yields at any block size */
    static const char text[] = "id,\"na,me\",v\r\n"
                               "1,\"a\"\"b\",x\n"
                               "\n"
                               "2,\"\",\"multi\nline\"\r\n"
                               "3,ab\"c,\"d\"e\n"
                               "4\n"
                               ",,\n"
                               "5,\"end\"";
    char err[256];
    pd_csv *c = pd_csv_parse(text, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(c->nrows, 6); /* ",," is a row of three empty fields */
    assert_string_equal(pd_csv_get(c, 1, 2), "multi\nline");
    assert_string_equal(pd_csv_get(c, 2, 1), "ab\"c");
    assert_string_equal(pd_csv_get(c, 2, 2), "de");
    pd_str want = {0};
    for (size_t r = 0; r <= c->nrows; r++) {
        const pd_csv_row *row = r == 0 ? &c->header : &c->rows[r - 1];
        for (size_t i = 0; i < row->nfields; i++)
            pd_str_printf(&want, "%s%s", i ? "|" : "", row->fields[i]);
        pd_str_append(&want, ";");
    }
    char *path = temp_csv(text, sizeof text - 1);
    pd_csv *loaded = pd_csv_load(path, err, sizeof err);
    assert_non_null(loaded);
    assert_int_equal(loaded->nrows, c->nrows);
    assert_string_equal(pd_csv_get(loaded, 5, 1), "end");
    pd_csv_free(loaded);
    for (size_t block = 1; block <= sizeof text; block++) {
        pd_str got = {0};
        assert_int_equal(read_all(path, block, &got, err, sizeof err), 0);
        assert_string_equal(got.data, want.data);
        pd_str_free(&got);
    }
    remove_temp(path);
    pd_str_free(&want);
    pd_csv_free(c);
}

static void test_reader_errors(void **state)
{
    (void)state;
    char err[256];
    assert_null(pd_csv_reader_open("/nonexistent/y.csv", 0, err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/y.csv"));
    assert_null(pd_csv_reader_open("/tmp", 0, err, sizeof err));
    assert_non_null(strstr(err, "/tmp"));

    static const char text[] = "a,b\n1,2\n3,\"open\n4,5\n";
    char *path = temp_csv(text, sizeof text - 1);
    pd_csv_reader *r = pd_csv_reader_open(path, 4, err, sizeof err);
    pd_csv_row row;
    assert_int_equal(pd_csv_reader_next(r, &row, err, sizeof err), 1);
    assert_int_equal(pd_csv_reader_next(r, &row, err, sizeof err), 1);
    assert_string_equal(row.fields[1], "2");
    /* the quote opened on line 3 runs to the end of the file */
    assert_int_equal(pd_csv_reader_next(r, &row, err, sizeof err), -1);
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "unterminated"));
    assert_non_null(strstr(err, "line 3"));
    err[0] = '\0';
    assert_int_equal(pd_csv_reader_next(r, &row, err, sizeof err), -1); /* and stays failed */
    assert_non_null(strstr(err, "unterminated"));
    pd_csv_reader_close(r);
    assert_null(pd_csv_load(path, err, sizeof err));
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "unterminated"));
    remove_temp(path);
}

static void test_csv_put_field(void **state)
{
    (void)state;
    pd_str s = {0};
    pd_csv_put_field(&s, "plain");
    pd_str_append(&s, ",");
    pd_csv_put_field(&s, "a,\"b\"");
    assert_string_equal(s.data, "plain,\"a,\"\"b\"\"\"");
    pd_str_free(&s);
}

static void test_parse_numbers(void **state)
{
    (void)state;
    double d;
    long l;
    unsigned long long u;
    assert_true(pd_parse_double(" 1.5 ", &d));
    assert_true(d == 1.5);
    assert_false(pd_parse_double("[N/A]", &d));
    assert_false(pd_parse_double("1.5x", &d));
    assert_true(pd_parse_long("-42", &l));
    assert_int_equal(l, -42);
    assert_false(pd_parse_u64("-1", &u));
    assert_true(pd_parse_u64("18446744073709551615", &u));
    assert_true(u == 18446744073709551615ULL);
}

static void test_sysroot_override(void **state)
{
    (void)state;
    char buf[256];
    unsetenv("PADDISER_PROC_ROOT");
    assert_string_equal(pd_proc_path(buf, sizeof buf, "stat"), "/proc/stat");
    setenv("PADDISER_PROC_ROOT", "/tmp/fake", 1);
    assert_string_equal(pd_proc_path(buf, sizeof buf, "self/mountstats"), "/tmp/fake/self/mountstats");
    unsetenv("PADDISER_PROC_ROOT");
    setenv("PADDISER_SYS_ROOT", "/tmp/fs", 1);
    assert_string_equal(pd_sys_path(buf, sizeof buf, "block"), "/tmp/fs/block");
    unsetenv("PADDISER_SYS_ROOT");
}

static void test_str_and_trim(void **state)
{
    (void)state;
    pd_str s = {0};
    for (int i = 0; i < 1000; i++)
        pd_str_printf(&s, "%d,", i);
    assert_int_equal(s.len, strlen(s.data));
    char *t = pd_str_take(&s);
    assert_memory_equal(t, "0,1,2,", 6);
    free(t);
    char buf[] = "  hi there \n";
    assert_string_equal(pd_trim(buf), "hi there");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_quotes_and_short_rows),
        cmocka_unit_test(test_csv_errors),
        cmocka_unit_test(test_reader_quoted_field_spanning_lines),
        cmocka_unit_test(test_reader_row_longer_than_block),
        cmocka_unit_test(test_reader_no_trailing_newline_and_crlf),
        cmocka_unit_test(test_reader_matches_table),
        cmocka_unit_test(test_reader_errors),
        cmocka_unit_test(test_csv_put_field),
        cmocka_unit_test(test_parse_numbers),
        cmocka_unit_test(test_reader_complete_lines),
        cmocka_unit_test(test_write_atomic_writes_through_fifos),
        cmocka_unit_test(test_write_atomic_fifo_without_reader_fails),
        cmocka_unit_test(test_write_atomic_ignores_planted_links),
        cmocka_unit_test(test_sysroot_override),
        cmocka_unit_test(test_str_and_trim),
    };
    return cmocka_run_group_tests_name("common", tests, NULL, NULL);
}
