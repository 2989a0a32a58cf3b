# IOPS's exit handler and resource sampler, formatted as IOPS 3.5.8 formats
# them for one repetition (iops/execution/planner.py: EXIT_HANDLER_TEMPLATE,
# RESOURCE_SAMPLER_TEMPLATE), for bench/probe_bench.sh to run side by side
# with paddiser-probe. The templates are read from IOPS's source with ast:
# nothing of IOPS is imported or executed, and nothing of it is kept here.
#   python3 bench/iops_sampler.py PLANNER_PY handler|sampler EXEC_DIR INTERVAL
import ast
import sys


def main():
    planner, kind, exec_dir, interval = sys.argv[1:5]
    consts = {}
    with open(planner) as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            consts[node.targets[0].id] = node.value.value
    if kind == "handler":
        sys.stdout.write(consts["EXIT_HANDLER_TEMPLATE"])
    else:
        sys.stdout.write(consts["RESOURCE_SAMPLER_TEMPLATE"].format(
            execution_dir=exec_dir, trace_prefix=consts["TRACE_FILENAME_PREFIX"], trace_interval=interval,
            sentinel_filename=consts["SAMPLER_SENTINEL_FILENAME"]))


if __name__ == "__main__":
    main()
