#!/usr/bin/env bash
# A one-node SLURM cluster on localhost for the SLURM tests (tests/test_slurm.py).
#
#   .ci/slurm.sh start    install Debian's slurmctld/slurmd/slurm-client/munge if absent, write a
#                         minimal /etc/slurm/slurm.conf, start munged, slurmctld and slurmd and
#                         wait until the node is idle; non-zero if the cluster did not come up
#   .ci/slurm.sh stop     stop the daemons this script started, by PID (SIGTERM, then SIGKILL)
#   .ci/slurm.sh status   show the node and the daemons; zero if the node is up
#
# Needs root (or passwordless sudo). Never touches a cluster it did not configure: an existing
# /etc/slurm/slurm.conf without this script's marker is left alone. Every wait is bounded.
# State, logs and pidfiles go to $POLYJUDGE_SLURM_DIR (default /tmp/polyjudge-slurm).
set -uo pipefail

DIR=${POLYJUDGE_SLURM_DIR:-/tmp/polyjudge-slurm}
CONF=/etc/slurm/slurm.conf
MARKER="# written by polyjudge .ci/slurm.sh"
PACKAGES=(slurmctld slurmd slurm-client munge)
UP_TIMEOUT=60      # seconds for the node to become idle
STOP_TIMEOUT=10    # seconds for a daemon to exit after SIGTERM (then SIGKILL)

say() { echo "slurm.sh: $*" >&2; }

if [ "$(id -u)" = 0 ]; then
    SUDO=()
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    SUDO=(sudo -n)
else
    SUDO=(false)
fi
as_root() { "${SUDO[@]}" "$@"; }

# alive PIDFILE NAME: the pidfile names a live (not zombie) process called NAME
alive() {
    local pid state
    [ -r "$1" ] || return 1
    pid=$(tr -dc 0-9 2>/dev/null <"$1")
    [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || return 1
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || return 1
    state=$(sed 's/^.*) //' "/proc/$pid/stat" | cut -d' ' -f1)
    [ "$state" != Z ]
}
dead() { ! alive "$@"; }

# wait_until SECONDS COMMAND...: poll COMMAND every half second, at most SECONDS
wait_until() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || return 1
        sleep 0.5
    done
}

node_state() { timeout 10 sinfo -h -N -o %T 2>/dev/null | head -1; }
node_idle() { [ "$(node_state)" = idle ]; }
node_up() { case "$(node_state)" in idle|mixed|allocated|completing) return 0 ;; esac; return 1; }
munge_works() { timeout 10 munge -n 2>/dev/null | timeout 10 unmunge >/dev/null 2>&1; }

install_packages() {
    local missing=()
    command -v slurmctld >/dev/null || missing+=(slurmctld)
    command -v slurmd >/dev/null || missing+=(slurmd)
    command -v sinfo >/dev/null || missing+=(slurm-client)
    command -v munged >/dev/null || missing+=(munge)
    [ ${#missing[@]} -eq 0 ] && return 0
    command -v apt-get >/dev/null || { say "no apt-get to install ${missing[*]}"; return 1; }
    say "installing ${PACKAGES[*]}"
    as_root timeout 300 apt-get update -qq &&
        as_root env DEBIAN_FRONTEND=noninteractive timeout 600 \
            apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null
}

write_conf() {
    if [ -e "$CONF" ] && ! grep -qF "$MARKER" "$CONF"; then
        say "$CONF exists and was not written by this script; not touching it"
        return 1
    fi
    local host cpus mem
    host=$(hostname -s)
    cpus=$(nproc)
    mem=$(awk '/^MemTotal:/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)
    as_root mkdir -p "$DIR/state" "$DIR/spool" /etc/slurm || return 1
    as_root tee "$CONF" >/dev/null <<EOF || return 1
$MARKER (one node on localhost, for tests)
ClusterName=polyjudge
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
# finished jobs stay visible to squeue for 10 min (the executor's squeue status command needs it)
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munged() {
    if munge_works; then
        return 0
    fi
    as_root install -d -o munge -g munge -m 0755 /run/munge /var/log/munge /var/lib/munge
    as_root runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid || return 1
    wait_until 10 munge_works || { say "munged did not start"; return 1; }
    # record that this script started it, so that stop stops it
    as_root cp /run/munge/munged.pid "$DIR/munged.pid"
}

start_daemon() {  # NAME ARGS...: start a SLURM daemon unless its pidfile names a live one
    local name=$1
    shift
    alive "$DIR/$name.pid" "$name" && return 0
    as_root "/usr/sbin/$name" "$@" || { say "$name failed to start"; return 1; }
    wait_until 10 alive "$DIR/$name.pid" "$name" || { say "$name did not stay up"; return 1; }
}

start() {
    if command -v sinfo >/dev/null && node_up; then
        say "a SLURM node is already up"
        return 0
    fi
    [ "${SUDO[*]}" != false ] || { say "needs root or passwordless sudo"; return 1; }
    install_packages || { say "could not install ${PACKAGES[*]}"; return 1; }
    as_root mkdir -p "$DIR" && write_conf || return 1
    start_munged || return 1
    start_daemon slurmctld -c || return 1
    start_daemon slurmd || return 1
    # ReturnToService=2 brings the node back by itself; resume it in case it came up drained
    if ! wait_until 20 node_idle; then
        as_root timeout 10 scontrol update nodename="$(hostname -s)" state=resume 2>/dev/null
    fi
    if wait_until "$UP_TIMEOUT" node_idle; then
        say "node $(hostname -s) is idle ($(nproc) CPUs)"
        return 0
    fi
    say "the node did not become idle (state: $(node_state)); logs:"
    as_root tail -n 20 "$DIR/slurmctld.log" "$DIR/slurmd.log" >&2
    return 1
}

stop_pid() {  # NAME: SIGTERM the daemon recorded in $DIR/NAME.pid, SIGKILL if it lingers
    local name=$1 file="$DIR/$1.pid" pid
    if alive "$file" "$name"; then
        pid=$(tr -dc 0-9 <"$file")
        as_root kill -TERM "$pid" 2>/dev/null
        if ! wait_until "$STOP_TIMEOUT" dead "$file" "$name"; then
            say "$name ($pid) ignored SIGTERM; sending SIGKILL"
            as_root kill -KILL "$pid" 2>/dev/null
            wait_until 5 dead "$file" "$name" ||
                { say "$name ($pid) is still alive"; return 1; }
        fi
        say "stopped $name ($pid)"
    fi
    as_root rm -f "$file"
}

stop() {
    local status=0
    for name in slurmd slurmctld munged; do
        stop_pid "$name" || status=1
    done
    return $status
}

status() {
    for name in munged slurmctld slurmd; do
        if alive "$DIR/$name.pid" "$name"; then
            echo "$name: running ($(tr -dc 0-9 <"$DIR/$name.pid"))"
        else
            echo "$name: not started by this script"
        fi
    done
    command -v sinfo >/dev/null && timeout 10 sinfo 2>&1
    node_up
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) status ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
