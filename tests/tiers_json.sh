#!/bin/sh
# `paddiser tiers --json` (issue #17) against the table, field by field: on
# this machine's /sys and on a fixture tree (PADDISER_SYS_ROOT) with a fast
# node, a CPU-less slow node with HMAT values and a node with no tier and no
# HMAT values (nulls). stdout holds the one JSON document only.
set -eu
# the checks parse the JSON with python3 (the fresh root's minimal system has none)
command -v python3 >/dev/null 2>&1 || { echo "tiers_json: SKIP (no python3)"; exit 0; }
BIN=${BUILD:-build}/paddiser
T=$(mktemp -d /tmp/pd-tiers-json.XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# compare TEXT JSON: every node row and the verdict line
compare() {
    python3 - "$1" "$2" <<'PY' || fail "tiers --json and the table differ: $(cat "$1") / $(cat "$2")"
import json, sys
text = open(sys.argv[1]).read().splitlines()
d = json.load(open(sys.argv[2]))
assert set(d) == {"nodes", "fast_node", "slow_node", "reason"}, d.keys()
assert text[0].split() == ["node", "cpus", "memory", "free", "tier", "rd_lat", "wr_lat", "rd_bw", "wr_bw", "role"]
rows = text[1:-1]
assert len(rows) == len(d["nodes"]) >= 1, (rows, d["nodes"])
def num(v):
    return "-" if v is None else str(v)
def gib(v):
    return "-" if not v else "%.1f GiB" % (v / 2**30)
for row, n in zip(rows, d["nodes"]):
    f = row.split()
    # memory and free are "X GiB" (two words) or "-"
    words = []
    i = 0
    while i < len(f):
        if i + 1 < len(f) and f[i + 1] == "GiB":
            words.append(f[i] + " GiB"); i += 2
        else:
            words.append(f[i]); i += 1
    role = words[9] if len(words) > 9 else None
    assert words[0] == str(n["node"]), (row, n)
    assert words[1] == ("none" if n["cpuless"] else str(n["cpus"])), (row, n)
    # free memory moves between the two runs (other processes): a tolerance
    free_ok = words[3] == gib(n["mem_free_bytes"]) or (
        n["mem_free_bytes"] and words[3].endswith(" GiB")
        and abs(float(words[3][:-4]) - n["mem_free_bytes"] / 2**30) <= 0.25)
    assert words[2] == gib(n["mem_total_bytes"]) and free_ok, (row, n)
    assert words[4] == num(n["tier"]), (row, n)
    assert words[5:9] == [num(n[k]) for k in ("read_latency_ns", "write_latency_ns", "read_bw_mbps", "write_bw_mbps")], (row, n)
    assert role == n["role"], (row, n)
    assert (n["role"] == "fast") == (n["node"] == d["fast_node"]), n
    assert (n["role"] == "slow") == (n["node"] == d["slow_node"]), n
if d["slow_node"] is None:
    assert text[-1] == d["reason"], (text[-1], d["reason"])
else:
    assert text[-1] == "fast node %d, slow node %d: %s" % (d["fast_node"], d["slow_node"], d["reason"]), text[-1]
PY
}

"$BIN" tiers >"$T/host.txt"
"$BIN" tiers --json >"$T/host.json"
compare "$T/host.txt" "$T/host.json"

n=$T/devices/system/node
mt=$T/devices/virtual/memory_tiering
mkdir -p "$n/node0" "$n/node1/access0/initiators" "$n/node2" "$mt/memory_tier4" "$mt/memory_tier22"
echo 0-2 > "$n/online"
echo 0-7 > "$n/node0/cpulist"
echo > "$n/node1/cpulist"
echo 8-9 > "$n/node2/cpulist"
printf 'Node 0 MemTotal: 16777216 kB\nNode 0 MemFree: 8388608 kB\n' > "$n/node0/meminfo"
printf 'Node 1 MemTotal: 67108864 kB\nNode 1 MemFree: 67108864 kB\n' > "$n/node1/meminfo"
printf 'Node 2 MemTotal: 1048576 kB\nNode 2 MemFree: 524288 kB\n' > "$n/node2/meminfo"
echo 0 > "$mt/memory_tier4/nodelist"
echo 1 > "$mt/memory_tier22/nodelist"
for f in read_latency:300 write_latency:350 read_bandwidth:8192 write_bandwidth:4096; do
    echo "${f#*:}" > "$n/node1/access0/initiators/${f%%:*}"
done
PADDISER_SYS_ROOT=$T "$BIN" tiers >"$T/fx.txt"
PADDISER_SYS_ROOT=$T "$BIN" tiers --json >"$T/fx.json" 2>"$T/fx.err"
compare "$T/fx.txt" "$T/fx.json"
python3 - "$T/fx.json" <<'PY' || fail "fixture values: $(cat "$T/fx.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert [n["node"] for n in d["nodes"]] == [0, 1, 2]
assert d["fast_node"] == 0 and d["slow_node"] == 1
n1, n2 = d["nodes"][1], d["nodes"][2]
assert n1["cpuless"] is True and n1["tier"] == 22 and n1["read_latency_ns"] == 300 and n1["write_bw_mbps"] == 4096
assert n1["mem_total_bytes"] == 64 * 2**30 and n1["role"] == "slow"
assert n2["tier"] is None and n2["read_latency_ns"] is None and n2["role"] is None and n2["cpus"] == 2
PY
echo "tiers_json: ok"
