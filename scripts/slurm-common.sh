# Shared by scripts/slurm-localhost.sh and scripts/slurm-netns.sh (sourced,
# not run): the state directory's check, munged under it, and stopping a
# daemon by its PID file. The caller defines log() and, before start_munge
# and stop_pidfile, D (the state directory). SLURM_MUNGE_KEY=system copies
# /etc/munge/munge.key when it can (the single-node cluster); otherwise, or
# when it cannot, the key is fresh random bytes.

# the state directory: ours, a real directory, nobody else may write it
check_dir() {
    [ -d "$1" ] && [ ! -L "$1" ] || { log "$1 is not a directory"; exit 1; }
    [ "$(stat -c %u "$1")" = "$(id -u)" ] || { log "$1 belongs to someone else: refusing it"; exit 1; }
    case $(stat -c %A "$1") in
        ?????w????|????????w?) log "$1 is writable by others: refusing it"; exit 1;;
    esac
}

# a PID file (not a link) whose process is alive
alive() { [ -f "$1" ] && [ ! -L "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start_munge() {
    if alive "$D/munge/munged.pid"; then return 0; fi
    mkdir -p "$D/munge"
    { [ "${SLURM_MUNGE_KEY:-}" = system ] && cp /etc/munge/munge.key "$D/munge/munge.key" 2>/dev/null; } ||
        dd if=/dev/urandom of="$D/munge/munge.key" bs=128 count=1 2>/dev/null
    chown -R munge:munge "$D/munge"
    chmod 0700 "$D/munge"
    chmod 0400 "$D/munge/munge.key"
    runuser -u munge -- munged --force \
        --socket="$D/munge/munge.socket" --key-file="$D/munge/munge.key" \
        --pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" \
        --seed-file="$D/munge/munged.seed"
    i=0
    until [ -S "$D/munge/munge.socket" ]; do
        i=$((i + 1)); [ $i -lt 100 ] || { log "munged did not start (see $D/munge/munged.log)"; return 1; }
        sleep 0.1
    done
}

# stop_pidfile FILE COMM: kill the process FILE names if it is COMM, wait up
# to 10 s, then SIGKILL; remove FILE. A link or another program is left alone.
stop_pidfile() {
    if [ -L "$1" ]; then
        log "$1 is a link: not killing what it names"
        return 0
    fi
    if alive "$1"; then
        pid=$(cat "$1")
        comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
        if [ "$comm" != "$2" ]; then
            log "$1 names PID $pid, which is '$comm', not $2: not killing it"
            rm -f "$1"
            return 0
        fi
        kill "$pid"
        i=0
        while kill -0 "$pid" 2>/dev/null; do
            i=$((i + 1))
            if [ $i -ge 100 ]; then kill -9 "$pid" 2>/dev/null || true; break; fi
            sleep 0.1
        done
    fi
    rm -f "$1"
}
