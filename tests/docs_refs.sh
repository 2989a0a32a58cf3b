#!/bin/sh
# Docs name only files that exist in the repository (issue #10).
#
# Scans README.md, docs/**/*.md, examples/**/README*, man/*.[1-8] and the
# comments of include/*.h, and collects every repository path they name:
#   - markdown link targets [text](path), resolved against the doc's folder;
#   - words (backticked or bare, code blocks included) that start with a
#     repository folder (docs/ src/ include/ tests/ examples/ scripts/
#     models/ bench/ mk/ man/ notes/ shared/) or end in .md .c .h .sh .yaml
#     .json .csv; `a/b.{c,h}` is expanded to a/b.c a/b.h.
# Not collected: URLs, and files of another repository, which docs write as
# OWNER/REPO:PATH (luanteylo/iops:docs/examples/...). Jinja {{ x }} counts as
# a placeholder.
# Each must exist, except for the cases the ALLOWED rules below name. Every
# missing one is listed as FILE:LINE: PATH and the test fails.
# Set DOCS_REFS_VERBOSE=1 to list every path checked and the rule applied.
set -u
ROOT=$(cd "${TESTS_DIR:-$(dirname "$0")}/.." && pwd)
cd "$ROOT" || exit 1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "docs_refs: $*" >&2; exit 1; }

# ---- the documents ----------------------------------------------------------
{
    echo README.md
    find docs -name '*.md'
    [ -d examples ] && find examples -name 'README*'
    ls include/*.h
    [ -d man ] && find man -name '*.[1-8]'
} | sort >"$T/docs"
[ "$(wc -l <"$T/docs")" -gt 5 ] || fail "found too few documents to scan"

# ---- names of files in the repository (for bare file names) -----------------
# Everything under the root except version control and build outputs.
find . \( -name .git -o -name 'build' -o -name 'build-*' -o -name workdir \) -prune \
    -o -type f -print | sed 's|.*/||' | sort -u >"$T/basenames"

# ---- extraction: FILE<TAB>LINE<TAB>KIND<TAB>PATH, KIND = link or word --------
extract() { # FILE
    awk -v F="$1" '
    BEGIN {
        OFS = "\t"
        header = (F ~ /\.h$/); man = (F ~ /\.[1-8]$/); incomment = 0
        pre = "^(\\./)?(docs|src|include|tests|examples|scripts|models|bench|mk|man|notes|shared|\\.ci)/"
        ext = "\\.(md|c|h|sh|yaml|json|csv)$"
    }
    # Header files: keep only the text of comments.
    function comments(s,    out, i) {
        out = ""
        while (s != "") {
            if (incomment) {
                i = index(s, "*/")
                if (i == 0) { out = out " " s; s = "" }
                else { out = out " " substr(s, 1, i - 1); s = substr(s, i + 2); incomment = 0 }
            } else {
                i = index(s, "/*")
                j = index(s, "//")
                if (j > 0 && (i == 0 || j < i)) { out = out " " substr(s, j + 2); s = "" }
                else if (i == 0) s = ""
                else { s = substr(s, i + 2); incomment = 1 }
            }
        }
        return out
    }
    # a/b.{c,h}x -> "a/b.cx a/b.hx"; several groups multiply
    # (a/{r,w}_{x,y}: four words). Each expansion is a word of its own on a
    # work list: expanding the joined string instead matched a later word'"'"'s
    # group and copied the rest each time, without end.
    function braces(w,    queue, qn, qi, cur, pre_, body, post, n, parts, k, out) {
        qn = 1; queue[1] = w; out = ""
        for (qi = 1; qi <= qn; qi++) {
            cur = queue[qi]
            if (qn < 1024 && match(cur, /\{[^{}]*,[^{}]*\}/)) {
                pre_ = substr(cur, 1, RSTART - 1)
                body = substr(cur, RSTART + 1, RLENGTH - 2)
                post = substr(cur, RSTART + RLENGTH)
                n = split(body, parts, ",")
                for (k = 1; k <= n; k++) queue[++qn] = pre_ parts[k] post
            } else {
                out = out (out == "" ? "" : " ") cur
            }
        }
        return out
    }
    function joinargs(r,    out, q) {
        out = ""
        while (r != "") {
            sub(/^[ \t]+/, "", r)
            if (r == "") break
            if (substr(r, 1, 1) == "\"") {
                r = substr(r, 2); q = index(r, "\"")
                if (q == 0) { out = out r; r = "" }
                else { out = out substr(r, 1, q - 1); r = substr(r, q + 1) }
            } else if (match(r, /[ \t]/)) {
                out = out substr(r, 1, RSTART - 1); r = substr(r, RSTART)
            } else { out = out r; r = "" }
        }
        return out
    }
    function word(w) {
        sub(/^[,;!?'"'"'"]*(\.\/)?/, "", w)   # leading quotes; "./"
        sub(/[.,;!?'"'"'"]+$/, "", w)          # trailing punctuation
        if (w == "") return
        if (w ~ pre || w ~ ext) print F, NR, "word", w
    }
    {
        s = $0
        if (header) s = comments(s)
        if (man) {                                  # roff escapes
            gsub(/\\f(\[[A-Z]*\]|\(..|.)/, "", s)
            gsub(/\\&/, "", s); gsub(/\\-/, "-", s); gsub(/\\e/, "\\", s)
            gsub(/\\\(../, " ", s)
            if (s ~ /^\.\\"/) next                   # roff comment
            # .IR PREFIX /share/x.json: alternating-font macros join their
            # arguments without a space ("..." is one argument)
            if (s ~ /^\.(BR|RB|IR|RI|BI|IB)([ \t]|$)/) s = joinargs(substr(s, 4))
        }
        # markdown links [text](target)
        while (match(s, /\]\([^)]*\)/)) {
            t = substr(s, RSTART + 2, RLENGTH - 3)
            s = substr(s, 1, RSTART) " " substr(s, RSTART + RLENGTH)
            sub(/[ \t]+".*$/, "", t); gsub(/^<|>$/, "", t)
            if (t ~ /^[A-Za-z][A-Za-z0-9+.-]*:/ || t ~ /^#/ || t == "") continue
            sub(/#.*$/, "", t)
            print F, NR, "link", t
        }
        gsub(/[A-Za-z][A-Za-z0-9+.-]*:\/\/[^ \t`)>"]*/, " ", s)   # URLs
        # Files of another repository are written OWNER/REPO:PATH
        # (luanteylo/iops:docs/examples/...): not ours, not checked. OWNER
        # must not be one of our folders (src/foo.c:12 is a file and a line).
        t = s; s = ""
        while (match(t, /[A-Za-z0-9_-]+\/[A-Za-z0-9_.-]+:[^ \t`'"'"'"()]+/)) {
            r = substr(t, RSTART, RLENGTH)
            o = r; sub(/\/.*/, "", o)
            b = RSTART > 1 ? substr(t, RSTART - 1, 1) : ""
            if (b ~ /[A-Za-z0-9_.\/-]/ ||   # mid-word: examples/a/b.yaml:3
                o ~ /^(docs|src|include|tests|examples|scripts|models|bench|mk|man|notes|shared|build.*|workdir)$/)
                s = s substr(t, 1, RSTART + RLENGTH - 1)
            else
                s = s substr(t, 1, RSTART - 1) " "
            t = substr(t, RSTART + RLENGTH)
        }
        s = s t
        gsub(/\{\{[^}]*\}\}/, "<var>", s)             # Jinja {{ x }}: a placeholder
        gsub(/\{%[^%]*%\}/, " ", s)                  # Jinja {% ... %}
        while (match(s, /\$\([A-Za-z_][A-Za-z0-9_]*\)/))   # $(BUILD) -> $BUILD
            s = substr(s, 1, RSTART) substr(s, RSTART + 2, RLENGTH - 3) substr(s, RSTART + RLENGTH)
        gsub(/[^A-Za-z0-9_.\/*<>$~{},+@-]/, " ", s) # path characters only
        n = split(s, ws, " ")
        for (i = 1; i <= n; i++) {
            m = split(braces(ws[i]), bs, " ")
            for (k = 1; k <= m; k++) {
                c = split(bs[k], cs, ",")
                for (l = 1; l <= c; l++) word(cs[l])
            }
        }
    }' "$1"
}
while read -r d; do extract "$d" || fail "could not scan $d (awk failed)"; done <"$T/docs" >"$T/refs"
[ -s "$T/refs" ] || fail "extracted no paths at all (extractor broken?)"

# ---- ALLOWED rules ------------------------------------------------------------
# Bare file names (no folder) of files paddiser writes into a run directory, a
# repetition directory or the user's directory, which a doc names without a
# path (docs/bench.md "Run directory" lists them). Shell patterns.
OUTPUT_NAMES='
__iops_*
__paddiser_*
run_*.sh
post_*.sh
results.csv
report.html
paddiser_tasks.csv
objects.csv
tiers.csv
'
# File names the docs' example command lines give to the user's own files
# (paddiser model train data.csv -o model.json, paddiser sim profile -o
# bfs.json, cc app.c ...): they are made up by the reader, not shipped.
EXAMPLE_NAMES='
study.yaml
data.csv
model.json
syn.csv
bfs.json
m.json
app.c
'

in_list() { # LIST NAME: is NAME matched by one of the patterns in LIST?
    for pat in $1; do
        # shellcheck disable=SC2254
        case $2 in $pat) return 0;; esac
    done
    return 1
}

# The rule that lets PATH (named by DOC as KIND) pass, or "missing".
verdict() { # DOC KIND PATH
    d=$1 k=$2 p=$3
    if [ "$k" = link ]; then
        # relative to the document's folder, as a markdown viewer resolves it
        dir=$(dirname "$d")
        [ -e "$dir/$p" ] && { echo exists; return; }
        echo missing; return
    fi
    case $p in
    # Absolute or home paths (/proc, /sys, /usr/..., ~/...): not in the repository.
    /*|'~'*) echo absolute; return;;
    # Build outputs: build/, build-asan/, build-tsan/ (any build-*), paths
    # under a variable such as $BUILD/ and $(BUILD)/ (the extractor writes
    # $(X) as $X) or $PWD/, and the workdir/ a study run writes: they exist
    # only after `make` or a run.
    build/*|build-*/*|'$'*|workdir/*) echo build-output; return;;
    # A leading all-caps folder is a placeholder the user chooses
    # (PREFIX/share/..., RUN_DIR/..., DIR/...).
    [A-Z]*/*)
        first=${p%%/*}
        case $first in *[!A-Z_]*) ;; *) echo placeholder-dir; return;; esac;;
    # A bare extension (".md files"), not a path.
    .[a-z]*) case $p in */*|*.*.*) ;; *) echo extension; return;; esac;;
    esac
    case $p in
    # Placeholders (<name>, ..., NNN): the folder before the first placeholder
    # must exist (so shared/spec/... fails when there is no shared/spec/).
    *'<'*|*...*|*NNN*)
        head=$(printf '%s\n' "$p" | sed 's/<.*//; s/\.\.\..*//; s/NNN.*//')
        case $head in */*) head=${head%/*};; *) head=.;; esac
        if [ -d "$head" ]; then echo placeholder; else echo missing; fi
        return;;
    # Globs with a folder (tests/*.sh, tests/test_runtime*.c): must match a file.
    */*'*'*|*'*'*/*)
        # shellcheck disable=SC2086
        set -- $p
        if [ -e "$1" ]; then echo glob; else echo missing; fi
        return;;
    esac
    case $p in
    */*) if [ -e "$p" ]; then echo exists; else echo missing; fi; return;;
    esac
    # A bare file name (no folder): some repository file has that name (docs
    # say `test_sim.c` for tests/test_sim.c), or one of the lists above has
    # it; a bare glob (test_*.c) must match a repository file name.
    case $p in
    *'*'*)
        while read -r b; do
            # shellcheck disable=SC2254
            case $b in $p) echo basename-glob; return;; esac
        done <"$T/basenames";;
    *) grep -qxF -- "$p" "$T/basenames" && { echo basename; return; };;
    esac
    in_list "$OUTPUT_NAMES" "$p" && { echo output-name; return; }
    in_list "$EXAMPLE_NAMES" "$p" && { echo example-name; return; }
    # An all-caps name is a placeholder for the user's file (STUDY.yaml,
    # PROBLEM.json, DATA.csv, MODEL.json); not for .md, .c, .h, .sh: README.md
    # is a real file and would be found above.
    case $p in
    *.yaml|*.json|*.csv)
        case ${p%.*} in *[!A-Z0-9_]*) ;; *) echo placeholder-name; return;; esac;;
    esac
    echo missing
}

bad=0
while IFS='	' read -r d l k p; do
    v=$(verdict "$d" "$k" "$p")
    [ "${DOCS_REFS_VERBOSE:-0}" = 1 ] && printf '%s:%s: %s %s [%s]\n' "$d" "$l" "$k" "$p" "$v"
    if [ "$v" = missing ]; then
        printf '%s:%s: %s\n' "$d" "$l" "$p" >&2
        bad=$((bad + 1))
    fi
done <"$T/refs"
[ "$bad" -eq 0 ] || fail "$bad reference(s) to files that are not in the repository (listed above)"

# ---- self-check: the rules above must catch a dead reference ------------------
mkdir -p "$T/selfdocs" && cat >"$T/selfdocs/x.md" <<'EOF'
see `notes/rundir.md` and shared/spec/resource-sampling.txt, [x](nope.md),
shared/spec/..., `src/lib/planner.{c,zz}`, docs/nonesuch_*.md, not_a_file.json
and examples/membw/nope.yaml:3, but not build/x.json, `tests/*.sh`, [y](../x.md)
luanteylo/iops:docs/x.md, $(BUILD)/a.csv, `{{ execution_dir }}/a.json`, DATA.csv
EOF
: >"$T/x.md" # the target of [y](../x.md)
cat >"$T/selfdocs/x.1" <<'EOF'
.\" roff: .IR joins its arguments; PREFIX/ is a placeholder
.IR PREFIX /share/paddiser/x.json
.IR shared/spec/ summary\-metrics.md ,
.I notes/rundir.md
EOF
{ extract "$T/selfdocs/x.md"; extract "$T/selfdocs/x.1"; } >"$T/selfrefs"
n=0
while IFS='	' read -r d l k p; do
    v=$(verdict "$d" "$k" "$p")
    [ "${DOCS_REFS_VERBOSE:-0}" = 1 ] && printf 'self-check %s:%s: %s %s [%s]\n' "${d##*/}" "$l" "$k" "$p" "$v"
    [ "$v" = missing ] && n=$((n + 1))
done <"$T/selfrefs"
[ "$n" -eq 10 ] || fail "self-check: expected 10 dead references in the samples, found $n"
exit 0
