"""IOPS's `find` listing (iops/results/find.py of IOPS_SRC) called directly,
loading only find.py and status_rollup.py, so that no other IOPS dependency
(pandas, jinja2, ...) is needed: tests/bench_find_iops.sh compares
`paddiser find` with it byte for byte.

usage: python3 iops_find_direct.py IOPS_SRC PATH [VAR=VALUE...] [--status S]
                                   [--show-command] [--hide COLS] [--full]
"""
import importlib.util
import sys
import types
from pathlib import Path


def load(name, file):
    spec = importlib.util.spec_from_file_location(name, file)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def main(argv):
    root = Path(argv[0]) / "iops"
    for name, path in (("iops", root), ("iops.results", root / "results")):
        pkg = types.ModuleType(name)  # the packages without their __init__ (which imports pandas)
        pkg.__path__ = [str(path)]
        sys.modules[name] = pkg
    load("iops.results.status_rollup", root / "results" / "status_rollup.py")
    find = load("iops.results.find", root / "results" / "find.py")
    args = list(argv[1:])
    path = Path(args.pop(0))
    filters, status, show, hide, full = [], None, False, None, False
    while args:
        a = args.pop(0)
        if a == "--status":
            status = args.pop(0)
        elif a == "--show-command":
            show = True
        elif a == "--hide":
            hide = set(args.pop(0).split(","))
        elif a == "--full":
            full = True
        else:
            filters.append(a)
    find.find_executions(path, filters, show_command=show, show_full=full, hide_columns=hide,
                         status_filter=status)


if __name__ == "__main__":
    main(sys.argv[1:])
