#!/usr/bin/env bash
# A private single-node Slurm cluster on this machine, for proving schedlab's job-array recipe
# (docs/cluster.md) on the real thing: munged, slurmctld and slurmd from the distribution's
# packages (slurm-wlm, munge), each started with its own files under one state directory —
# key, socket, slurm.conf, spool, logs, pid files — so nothing under /etc or /run is touched.
#
#   scripts/slurm-local.sh up DIR     start the cluster in DIR (created), wait until the node is idle
#   scripts/slurm-local.sh down DIR   stop every daemon DIR started and remove DIR
#   scripts/slurm-local.sh env DIR    print the SLURM_CONF line clients need
#
# Needs root (slurmd runs jobs as their submitter). `up` journals each daemon's pid file in DIR
# before it starts it, so `down` — or the next `up` in the same DIR after a SIGKILL — stops it.
set -euo pipefail

cmd=${1:-}
dir=${2:-}
[[ -n $cmd && -n $dir ]] || { echo "usage: $0 up|down|env DIR" >&2; exit 2; }

stop_daemons() {
    local d=$1
    for pidfile in "$d"/slurmd.pid "$d"/slurmctld.pid "$d"/munged.pid; do
        [[ -f $pidfile ]] || continue
        local pid
        pid=$(cat "$pidfile" 2>/dev/null || true)
        if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -9 "$pid" 2>/dev/null || true
        fi
        rm -f "$pidfile"
    done
}

case $cmd in
env)
    echo "export SLURM_CONF=$dir/slurm.conf"
    ;;
down)
    [[ -d $dir ]] || exit 0
    stop_daemons "$dir"
    rm -rf "$dir"
    ;;
up)
    [[ $(id -u) == 0 ]] || { echo "$0: needs root" >&2; exit 1; }
    for tool in munged slurmctld slurmd sbatch sinfo; do
        command -v "$tool" >/dev/null || { echo "$0: $tool not found (apt-get install slurm-wlm munge)" >&2; exit 1; }
    done
    [[ -d $dir ]] && stop_daemons "$dir"   # what a killed run left
    mkdir -p "$dir/spool" "$dir/state"
    chmod 700 "$dir"
    dir=$(cd "$dir" && pwd)
    host=$(hostname -s)
    cpus=$(nproc)
    mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))

    # munge: a key of our own, a socket of our own.
    [[ -f $dir/munge.key ]] || { head -c 1024 /dev/urandom > "$dir/munge.key"; chmod 400 "$dir/munge.key"; }
    munged --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
        --log-file="$dir/munged.log" --seed-file="$dir/munged.seed"
    for _ in $(seq 50); do [[ -S $dir/munge.sock ]] && break; sleep 0.1; done
    [[ -S $dir/munge.sock ]] || { echo "$0: munged did not start (see $dir/munged.log)" >&2; exit 1; }

    cat > "$dir/slurm.conf" <<EOF
ClusterName=schedlab
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.sock
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF=$dir/slurm.conf
    slurmctld -f "$dir/slurm.conf" -i
    slurmd -f "$dir/slurm.conf"
    for _ in $(seq 100); do
        state=$(sinfo -h -o %T 2>/dev/null || true)
        [[ $state == idle ]] && break
        sleep 0.2
    done
    if [[ $state != idle ]]; then
        echo "$0: the node did not come up (state '$state'; see $dir/slurmctld.log, $dir/slurmd.log)" >&2
        exit 1
    fi
    echo "slurm up in $dir: node $host, $cpus CPUs ($(slurmctld -V))"
    ;;
*)
    echo "usage: $0 up|down|env DIR" >&2
    exit 2
    ;;
esac
