#!/bin/sh
# `paddiser tiers` end to end: this machine's /sys, and a fixture tree with a
# CPU-less node 1 in memory_tier22 (PADDISER_SYS_ROOT).
set -eu
BIN=${BUILD:-build}/paddiser
root=$(mktemp -d /tmp/pd_tiers_cli_XXXXXX)
trap 'rm -rf "$root"' EXIT

out=$("$BIN" tiers)
echo "$out" | grep -q '^node  cpus  memory' || { echo "no table header: $out"; exit 1; }
echo "$out" | grep -Eq '^(no slow tier: |fast node [0-9]+, slow node [0-9]+: )' || { echo "no verdict: $out"; exit 1; }
if [ "$(cat /sys/devices/system/node/online 2>/dev/null)" = "0" ]; then
    echo "$out" | grep -qx 'no slow tier: single memory tier (node 0)' || { echo "single node: $out"; exit 1; }
fi

n=$root/devices/system/node
mkdir -p "$n/node0" "$n/node1/access0/initiators" "$root/devices/virtual/memory_tiering/memory_tier4" \
         "$root/devices/virtual/memory_tiering/memory_tier22"
echo 0-1 > "$n/online"
echo 0-7 > "$n/node0/cpulist"
echo > "$n/node1/cpulist"
printf 'Node 0 MemTotal: 16777216 kB\nNode 0 MemFree: 8388608 kB\n' > "$n/node0/meminfo"
printf 'Node 1 MemTotal: 67108864 kB\nNode 1 MemFree: 67108864 kB\n' > "$n/node1/meminfo"
echo 0 > "$root/devices/virtual/memory_tiering/memory_tier4/nodelist"
echo 1 > "$root/devices/virtual/memory_tiering/memory_tier22/nodelist"
for f in read_latency:300 write_latency:350 read_bandwidth:8192 write_bandwidth:4096; do
    echo "${f#*:}" > "$n/node1/access0/initiators/${f%%:*}"
done
out=$(PADDISER_SYS_ROOT=$root "$BIN" tiers)
echo "$out" | grep -q '^1     none  64.0 GiB   64.0 GiB   22    300      350       8192     4096     slow$' ||
    { echo "fixture node 1 row: $out"; exit 1; }
echo "$out" | grep -qx 'fast node 0, slow node 1: node 1 is in memory tier 22, node 0 in tier 4' ||
    { echo "fixture verdict: $out"; exit 1; }

# --json: the same facts as one object (issue #17)
js=$(PADDISER_SYS_ROOT=$root "$BIN" tiers --json)
echo "$js" | grep -qF '{"node": 1, "cpus": 0, "cpuless": true, "mem_total_bytes": 68719476736, "mem_free_bytes": 68719476736, "tier": 22, "read_latency_ns": 300, "write_latency_ns": 350, "read_bw_mbps": 8192, "write_bw_mbps": 4096, "role": "slow"}' ||
    { echo "fixture node 1 in JSON: $js"; exit 1; }
echo "$js" | grep -qF '"fast_node": 0, "slow_node": 1, "reason": "node 1 is in memory tier 22, node 0 in tier 4"}' ||
    { echo "fixture verdict in JSON: $js"; exit 1; }
if command -v python3 >/dev/null 2>&1; then
    echo "$js" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert len(d["nodes"]) == 2' ||
        { echo "tiers --json is not JSON: $js"; exit 1; }
fi

echo garbage > "$n/node1/access0/initiators/read_latency"
if PADDISER_SYS_ROOT=$root "$BIN" tiers >/dev/null 2>"$root/err"; then echo "malformed accepted"; exit 1; fi
grep -q 'node1/access0/initiators/read_latency: not a number' "$root/err" || { cat "$root/err"; exit 1; }
"$BIN" tiers --bogus >/dev/null 2>&1 && { echo "bad option accepted"; exit 1; }
exit 0
