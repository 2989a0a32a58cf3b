#!/usr/bin/env python3
"""What (a)'s ratio to the naive predictor can reach on independent noise.

bench/phases_bench.c scores a predictor by the median, over a run's later
instances (every instance of an input after the input's first), of
|prediction / wall - 1|, over the naive predictor's ("the previous instance
of the same input"), and takes the median of that ratio over runs. This
script plays the bench's protocol with instance times that are independent
noise around each input's level: inputs 128, 256, 192 and 128 MiB again
(levels 1, 2, 1.5), REPS instances a visit, each time level * (1 + SIGMA *
N(0, 1)); a new input's first instance (not the revisit's) is WARMUP times
slower, its factor itself off by WSIGMA. It scores two predictors that no
real one can beat on such noise:

  causal:  the mean of the input's instances so far past each visit's first
           (the revisit's first included), or the first divided by the true
           warm-up factor where there is none yet: what averaging the past
           can do;
  oracle:  the bench's oracle, the mean of the visit's other instances past
           its first, later ones included.

So it says how far below the naive predictor the protocol itself lets a
predictor go, before any drift of the machine. Not a test: a calculation.

  python3 bench/ratio_floor.py [RUNS]   (default 2000 runs a setting, ~20 s)
"""
import random
import statistics
import sys

LEVELS = {128: 1.0, 256: 2.0, 192: 1.5}
SEQUENCE = [128, 256, 192, 128]


def one_run(rng, reps, sigma, warmup, wsigma):
    history = {}  # input -> its instances past each visit's first (revisit's first included)
    err_causal, err_naive, err_oracle = [], [], []
    for size in SEQUENCE:
        new = size not in history
        times = []
        for r in range(reps):
            factor = 1.0
            if r == 0 and new:
                factor = warmup * (1 + wsigma * rng.gauss(0, 1))
            times.append(LEVELS[size] * factor * (1 + sigma * rng.gauss(0, 1)))
        for r in range(reps):
            if new and r == 0:
                continue  # the input's first instance: (b), not (a)
            t = times[r]
            prev = times[r - 1] if r > 0 else history[size][-1]
            past = history.get(size, []) + times[(1 if new else 0):r]
            pred = statistics.fmean(past) if past else times[0] / warmup
            others = [times[q] for q in range(1, reps) if q != r]
            err_naive.append(abs(prev - t) / t)
            err_causal.append(abs(pred - t) / t)
            err_oracle.append(abs(statistics.fmean(others) - t) / t)
        history.setdefault(size, []).extend(times[1:] if new else times)
    naive = statistics.median(err_naive)
    return statistics.median(err_causal) / naive, statistics.median(err_oracle) / naive


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rng = random.Random(1)
    print("reps  warm-up  causal/naive (IQR)      oracle/naive   (median over %d runs; noise 3%%)" % runs)
    for reps in (6, 8, 16, 32):
        for warmup in (1.0, 1.15):
            res = [one_run(rng, reps, 0.03, warmup, 0.03 if warmup > 1 else 0.0) for _ in range(runs)]
            causal = sorted(r[0] for r in res)
            oracle = sorted(r[1] for r in res)
            q = lambda v, f: v[int(f * (len(v) - 1))]
            print("%4d  %7.2f  %.3f (%.3f - %.3f)   %.3f" %
                  (reps, warmup, q(causal, 0.5), q(causal, 0.25), q(causal, 0.75), q(oracle, 0.5)))


if __name__ == "__main__":
    main()
