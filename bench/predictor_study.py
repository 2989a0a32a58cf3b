#!/usr/bin/env python3
"""How simple causal predictors fare against the naive one on recorded walls.

`build/bench/phases_bench --keep DIR` keeps every run's output of
examples/runtime/phases: DIR/on_NN.txt with the runtime, DIR/off_NN.txt
without. This script replays those walls and scores, on exactly the
instances and the statistic of the bench's (a) (every instance of an input
after the input's first; per run the median of |prediction / wall - 1|
over the naive predictor's, "the previous instance of the same input";
then the median over runs, with the interquartile range), predictors that
see only the input's earlier walls:

  naive      the previous instance of the input (the reference, 1.0)
  median3    the median of the input's last 3
  mean16     the mean of the input's last 16 (an average of the past)
  ewma0.3, ewma0.5
             exponentially weighted means of the input's last 16
  mix        half naive, half the median of the last 16
  level      a local-level (random walk plus noise) filter whose
             drift/noise ratio is, at each prediction, the one of six that
             best predicted the input's earlier walls
  runtime    the runtime's own prediction (on_NN.txt only)

and, per arm, the lag-1 autocorrelation of consecutive differences within
a visit (past its first): -0.5 for independent noise around a level (where
averaging beats the naive predictor, down to the 0.85 of
bench/ratio_floor.py), 0 for a random walk (where nothing causal beats
it). It replays a machine's own walls, so it says what that machine's
noise lets any of these reach, with or without the runtime in the process.

  python3 bench/predictor_study.py DIR [DIR ...]

Not a test: a calculation on measured data.
"""
import glob
import os
import statistics
import sys


def load(path):
    """The instance lines of one run, in order."""
    out = []
    with open(path) as f:
        for line in f:
            if not line.startswith("instance="):
                continue
            d = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            out.append({
                "mib": d["input_mib"],
                "occ": int(d["occurrence"]),
                "rep": int(d["rep"]),
                "wall": float(d["wall_s"]),
                "pred": float(d.get("predicted_s", "nan")),
            })
    return out


def ewma(h, a):
    s = h[0]
    for x in h[1:]:
        s = a * x + (1 - a) * s
    return s


def local_level(h):
    """Kalman filter of a random walk observed with noise, for each of six
    drift/noise variance ratios; the one whose one-step predictions of h
    erred least gives the level."""
    best = None
    for q in (0.01, 0.1, 0.3, 1.0, 3.0, 100.0):
        level, p, err = h[0], 1.0, 0.0
        for x in h[1:]:
            p += q
            k = p / (p + 1.0)
            err += abs(x - level)
            level += k * (x - level)
            p *= 1.0 - k
        if best is None or err < best[0]:
            best = (err, level)
    return best[1]


PREDICTORS = {
    "naive": lambda h: h[-1],
    "median3": lambda h: statistics.median(h[-3:]),
    "mean16": lambda h: statistics.fmean(h[-16:]),
    "ewma0.3": lambda h: ewma(h[-16:], 0.3),
    "ewma0.5": lambda h: ewma(h[-16:], 0.5),
    "mix": lambda h: 0.5 * h[-1] + 0.5 * statistics.median(h[-16:]),
    "level": lambda h: local_level(h[-16:]),
}


def run_ratios(run, with_runtime):
    """Per predictor, this run's median error over the naive one's."""
    errs = {k: [] for k in PREDICTORS}
    if with_runtime:
        errs["runtime"] = []
    for j, x in enumerate(run):
        if x["occ"] == 0:
            continue
        if with_runtime and not (x["pred"] == x["pred"]):  # the bench skips NaN predictions
            continue
        h = [y["wall"] for y in run[:j] if y["mib"] == x["mib"]]
        if not h:
            continue
        for k, p in PREDICTORS.items():
            errs[k].append(abs(p(h) / x["wall"] - 1))
        if with_runtime:
            errs["runtime"].append(abs(x["pred"] / x["wall"] - 1))
    naive = statistics.median(errs["naive"]) if errs["naive"] else 0
    if not naive > 0:
        return None
    return {k: statistics.median(v) / naive for k, v in errs.items()}


def diff_autocorr(runs):
    """Lag-1 autocorrelation of consecutive wall differences within visits
    (past each visit's first), each wall relative to its visit's median."""
    pairs = []
    for run in runs:
        visit = []
        for x in run + [None]:
            if x is not None and visit and x["mib"] == visit[-1]["mib"] and x["rep"] > 0:
                visit.append(x)
                continue
            walls = [y["wall"] for y in visit if y["rep"] > 0]
            if len(walls) >= 3:
                m = statistics.median(walls)
                d = [(b - a) / m for a, b in zip(walls, walls[1:])]
                pairs += list(zip(d, d[1:]))
            visit = [x] if x is not None else []
    if len(pairs) < 3:
        return float("nan")
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    cov = sum((x - ma) * (y - mb) for x, y in pairs)
    va = sum((x - ma) ** 2 for x in a)
    vb = sum((y - mb) ** 2 for y in b)
    return cov / (va * vb) ** 0.5 if va > 0 and vb > 0 else float("nan")


def quartiles(v):
    if len(v) < 2:
        return v[0], v[0]
    q = statistics.quantiles(v, n=4)
    return q[0], q[2]


def main(dirs):
    if not dirs:
        print(__doc__.strip().splitlines()[-3].strip(), file=sys.stderr)
        return 2
    status = 0
    for d in dirs:
        for arm, with_runtime in (("on", True), ("off", False)):
            files = sorted(glob.glob(os.path.join(d, arm + "_*.txt")))
            if not files:
                continue
            runs = [load(f) for f in files]
            ratios = [r for r in (run_ratios(run, with_runtime) for run in runs) if r]
            if not ratios:
                print(f"{d} {arm}: no run with later instances", file=sys.stderr)
                status = 1
                continue
            print(f"{d}: {arm} ({'with' if with_runtime else 'without'} the runtime), {len(ratios)} runs, "
                  f"difference autocorrelation {diff_autocorr(runs):+.2f}")
            for k in ratios[0]:
                v = [r[k] for r in ratios]
                lo, hi = quartiles(v)
                print(f"  {k:<8} / naive  {statistics.median(v):5.3f}  ({lo:.3f} - {hi:.3f})")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
