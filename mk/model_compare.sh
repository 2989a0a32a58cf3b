#!/bin/sh
# make model-compare: which training data should the default Eq. 2 model use?
# Trains f on (a) synthetic regions only, (b) simulator regions only,
# (c) both, and measures each on held-out regions of BOTH datasets (region
# split, holdout 0.2, seed 1: the same regions `model train --holdout 0.2
# --seed 1` holds out), plus leave-one-workload-out on the simulator rows
# (train on three kernels' rows, test on the fourth; the synthetic part of
# (a)/(c) stays in training). Prints a markdown table; deterministic for a
# given SIM_CSV (xgboost with one thread and a fixed seed).
# Env: BUILD, SIM_CSV, SYN_ARGS, TRAIN_ARGS, OUT (directory for the files).
set -eu
P="$BUILD/paddiser"
D="$OUT"
mkdir -p "$D"
q() { "$@" >/dev/null; }
cat_csv() { # header of the first file, rows of all
    head -n 1 "$1"
    for f in "$@"; do tail -n +2 "$f"; done
}
# shellcheck disable=SC2086
q "$P" model gen-synthetic -o "$D/syn.csv" $SYN_ARGS
q "$P" model split "$D/syn.csv" --train "$D/syn_train.csv" --test "$D/syn_test.csv" --holdout 0.2 --seed 1
q "$P" model split "$SIM_CSV" --train "$D/sim_train.csv" --test "$D/sim_test.csv" --holdout 0.2 --seed 1
cat_csv "$D/sim_train.csv" "$D/syn_train.csv" > "$D/both_train.csv"
train() { # train DATA MODEL
    # shellcheck disable=SC2086
    q "$P" model train "$1" -o "$2" --holdout 0 $TRAIN_ARGS
}
train "$D/syn_train.csv" "$D/syn.json"
train "$D/sim_train.csv" "$D/sim.json"
train "$D/both_train.csv" "$D/both.json"
# "MAPE R2 baselineMAPE baselineR2" of MODEL on DATA
metrics() {
    "$P" model eval "$1" "$2" | awk '/^all/ { gsub(/%/, ""); print $5, $7, $14, $16 }'
}
# leave-one-workload-out over the simulator rows: mean MAPE / R^2 over the folds
lowo() { # lowo KIND (syn|sim|both|f1)
    : > "$D/lowo_folds.txt"
    for w in $(tail -n +2 "$SIM_CSV" | cut -d/ -f1 | sort -u); do
        { head -n 1 "$SIM_CSV"; grep "^$w/" "$SIM_CSV"; } > "$D/lowo_test.csv"
        { head -n 1 "$SIM_CSV"; tail -n +2 "$SIM_CSV" | grep -v "^$w/"; } > "$D/lowo_sim.csv"
        case "$1" in
        syn | f1) m="$D/syn.json" ;;
        sim) train "$D/lowo_sim.csv" "$D/lowo.json"; m="$D/lowo.json" ;;
        both) cat_csv "$D/lowo_sim.csv" "$D/syn_train.csv" > "$D/lowo_both.csv"
              train "$D/lowo_both.csv" "$D/lowo.json"; m="$D/lowo.json" ;;
        esac
        echo "$w $(metrics "$m" "$D/lowo_test.csv")" >> "$D/lowo_folds.txt"
    done
    # columns: workload MAPE R2 baselineMAPE baselineR2. R^2 as the median
    # over the folds: a kernel whose f is constant (bfs: latency-bound, f = 1)
    # has no variance to explain and an arbitrarily negative R^2.
    awk -v f1="$([ "$1" = f1 ] && echo 1 || echo 0)" \
        '{ m += f1 ? $4 : $2; r[n++] = f1 ? $5 : $3 }
         END { for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
               med = n % 2 ? r[int(n / 2)] : (r[n / 2 - 1] + r[n / 2]) / 2
               printf "%.2f%% | %.3f", m / n, med }' "$D/lowo_folds.txt"
    cp "$D/lowo_folds.txt" "$D/lowo_folds_$1.txt"
}
echo "| model trained on | sim held-out: MAPE(t) | R^2(f) | synthetic held-out: MAPE(t) | R^2(f) | sim leave-one-workload-out: mean MAPE(t) | median R^2(f) |"
echo "|---|---:|---:|---:|---:|---:|---:|"
set -- $(metrics "$D/syn.json" "$D/sim_test.csv") $(metrics "$D/syn.json" "$D/syn_test.csv")
printf '| f = 1 (no model) | %.2f%% | %.3f | %.2f%% | %.3f | %s |\n' "$3" "$4" "$7" "$8" "$(lowo f1)"
for k in syn sim both; do
    case $k in syn) label="(a) synthetic only (the previous default)" ;;
               sim) label="(b) simulator only" ;;
               both) label="(c) simulator + synthetic" ;; esac
    set -- $(metrics "$D/$k.json" "$D/sim_test.csv") $(metrics "$D/$k.json" "$D/syn_test.csv")
    printf '| %s | %.2f%% | %.3f | %.2f%% | %.3f | %s |\n' "$label" "$1" "$2" "$5" "$6" "$(lowo $k)"
done
