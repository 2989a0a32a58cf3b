#!/bin/sh
# `paddiser run` for MPI through SLURM (issue #14): tests/run_mpi.sh with
# `srun -n 4 --overcommit --mpi=pmix` on a throwaway localhost SLURM
# (scripts/slurm-localhost.sh, its state in a mktemp directory, stopped by
# PID whatever happens). Needs root, slurm-wlm, munge and OpenMPI:
# `make check-run-mpi-slurm` installs them and sets RUN_MPI_SLURM=1; in the
# unit suite it skips.
set -eu
if [ "${RUN_MPI_SLURM:-}" != 1 ]; then
    echo "run_mpi_slurm: SKIP (run by make check-run-mpi-slurm)"; exit 0
fi
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d)
chmod 0711 "$W" # munged (the munge user) reaches its socket below
export PADDISER_SLURM_DIR=$W/slurm
trap '"$ROOT/scripts/slurm-localhost.sh" stop || true; rm -rf "$W"' EXIT
# A port pair nobody listens on (another check-slurm may hold the default).
port=""
i=0
while [ $i -lt 50 ]; do
    p=$(awk -v s="$$$i" 'BEGIN { srand(s); print 20000 + int(rand() * 20000) }')
    if ! command -v ss >/dev/null 2>&1 || ! ss -ltn | grep -q ":\($p\|$((p + 1))\) "; then port=$p; break; fi
    i=$((i + 1))
done
[ -n "$port" ] || { echo "run_mpi_slurm: FAIL: no free port pair"; exit 1; }
PADDISER_SLURM_PORT=$port "$ROOT/scripts/slurm-localhost.sh" start
export SLURM_CONF=$PADDISER_SLURM_DIR/etc/slurm.conf
RUN_MPI_LAUNCHER=srun RUNTIME_MPI_REQUIRED=1 BUILD=$BUILD TESTS_DIR="$ROOT/tests" sh "$ROOT/tests/run_mpi.sh"
