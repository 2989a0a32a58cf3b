#!/usr/bin/env python3
"""Differential test of paddiser's template engine against Jinja2.

  diff.py --driver build/template_render [--cases N] [--seed S]
  diff.py --driver build/template_render --write-corpus tests/template_diff/corpus.json [--cases N]

Generates N random templates (gen.py), renders each with Jinja2 configured
as IOPS configures it (Environment(trim_blocks=True, lstrip_blocks=True,
undefined=StrictUndefined), plus keep_trailing_newline=True: see README.md)
and with paddiser's engine (the driver, tests/template_diff/render.c), and
compares. A case agrees when both give the same text or both fail. When
Jinja2 renders and paddiser fails, paddiser rejected a construct it does not
support: counted, allowed. Any other outcome (different text, or text where
Jinja2 fails) is a mismatch: printed, and the exit status is 1.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen  # noqa: E402

import jinja2  # noqa: E402


# Jinja2 compiles templates to Python; a generated "2[0]" draws a compile-time warning
warnings.simplefilter("ignore", SyntaxWarning)


def jinja_env():
    return jinja2.Environment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined, autoescape=False)


def render_jinja(env, template, ctx):
    try:
        return {"out": env.from_string(template).render(**ctx)}
    except Exception as e:  # any failure: syntax, undefined, type errors
        return {"err": "%s: %s" % (type(e).__name__, e)}


def render_paddiser(driver, cases):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump([{"t": c["t"], "ctx": c["ctx"]} for c in cases], f)
        path = f.name
    try:
        res = subprocess.run([driver, path], capture_output=True, text=True, timeout=600)
    finally:
        os.unlink(path)
    if res.returncode != 0:
        sys.exit("driver failed (status %d): %s" % (res.returncode, res.stderr))
    lines = res.stdout.splitlines()
    if len(lines) != len(cases):
        sys.exit("driver printed %d results for %d cases: %s" % (len(lines), len(cases), res.stderr[-2000:]))
    return [json.loads(line) for line in lines]


def classify(ref, got):
    if "out" in ref and "out" in got:
        return "same" if ref["out"] == got["out"] else "mismatch"
    if "err" in ref and "err" in got:
        return "both-fail"
    if "out" in ref:
        return "rejected"
    return "mismatch"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", required=True)
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=20261204)
    ap.add_argument("--write-corpus")
    ap.add_argument("--show-rejected", type=int, default=0, help="print this many rejected cases")
    args = ap.parse_args()

    rng = random.Random(args.seed)
    env = jinja_env()
    cases = []
    for _ in range(args.cases):
        t = gen.gen_case(rng)
        cases.append({"t": t, "ctx": gen.CTX, "ref": render_jinja(env, t, gen.CTX)})
    got = render_paddiser(args.driver, cases)
    counts = {"same": 0, "both-fail": 0, "rejected": 0, "mismatch": 0}
    shown = 0
    for c, g in zip(cases, got):
        k = classify(c["ref"], g)
        counts[k] += 1
        if k == "mismatch" or (k == "rejected" and shown < args.show_rejected):
            if k == "rejected":
                shown += 1
            print("%s:\n  template: %r\n  jinja2:   %r\n  paddiser: %r" % (k.upper(), c["t"], c["ref"], g))
    print("template-diff: %d cases (seed %d, Jinja2 %s): %d same output, %d both fail, %d rejected by paddiser "
          "(Jinja2 renders), %d mismatches" % (args.cases, args.seed, jinja2.__version__, counts["same"],
                                              counts["both-fail"], counts["rejected"], counts["mismatch"]))
    if args.write_corpus:
        keep = [c for c, g in zip(cases, got) if classify(c["ref"], g) != "mismatch"]
        with open(args.write_corpus, "w") as f:
            json.dump({"jinja2": jinja2.__version__, "seed": args.seed, "ctx": gen.CTX,
                       "cases": [dict({"t": c["t"]}, **({"out": c["ref"]["out"]} if "out" in c["ref"] else {"fails": True}))
                                 for c in keep]}, f, indent=0)
            f.write("\n")
        print("wrote %d cases to %s" % (len(keep), args.write_corpus))
    return 1 if counts["mismatch"] else 0


if __name__ == "__main__":
    sys.exit(main())
