#!/bin/sh
# paddiser bench --progress: elapsed time and ETA on each [n/N] line on
# stderr; without it (stderr not a terminal, as here) the lines stay as they
# were; -q silences them either way. Checks the format, not the times.
set -eu
BUILD=${BUILD:-build}
PD=$(cd "$BUILD" && pwd)/paddiser
T=$(mktemp -d /tmp/pd-bench-progress.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$T/study.yaml" <<'YAML'
benchmark: {name: prog, workdir: ./wd, repetitions: 2, parallel: 2}
vars:
  x: {type: int, sweep: {mode: list, values: [1, 2, 3]}}
command: {template: "echo v={{ x }}"}
scripts:
  - name: prog
    script_template: |
      #!/bin/bash
      {{ command.template }} > {{ execution_dir }}/out.txt
    parser:
      file: out.txt
      metrics:
        - name: v
YAML
cd "$T"

"$PD" bench study.yaml --progress >out.log 2>err.log || fail "run with --progress: $(cat err.log)"
[ "$(grep -c '^\[' err.log)" -eq 6 ] || fail "expected 6 progress lines: $(cat err.log)"
D='([0-9]+\.[0-9] s|[0-9]+m[0-9]{2}s|[0-9]+h[0-9]{2}m)'
bad=$(grep '^\[' err.log | grep -Ev "^\[[1-6]/6\] exec_000[1-3] rep [12] done \(elapsed $D, ETA $D\)$" || true)
[ -z "$bad" ] || fail "progress lines without elapsed/ETA: $bad"
grep -q '^\[6/6\] .*, ETA 0\.0 s)$' err.log || fail "the last line's ETA is not 0: $(cat err.log)"

"$PD" bench study.yaml >out.log 2>err.log || fail "plain run: $(cat err.log)"
[ "$(grep -c '^\[' err.log)" -eq 6 ] || fail "expected 6 plain progress lines: $(cat err.log)"
! grep -q 'elapsed' err.log || fail "elapsed without --progress and stderr not a terminal: $(cat err.log)"

"$PD" bench study.yaml --progress -q >out.log 2>err.log || fail "quiet run: $(cat err.log)"
! grep -q '^\[' err.log || fail "-q --progress printed progress: $(cat err.log)"
echo "bench_progress: ok"
