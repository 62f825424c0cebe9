#!/usr/bin/env bash
# One-time machine set-up for schedlab, safe to run again: the Rust components CI checks
# with, Debian packages the tests and report use (Chromium and a font for the report test,
# procps for the tests' pgrep/kill, pip for SimPy, Slurm and munge for the cluster test),
# SimPy for the simulator peer benchmark,
# pyarrow (the reference Parquet reader the export test reads our files with), and tracefs
# mounted for sched_switch tracing.
set -euo pipefail

say() { printf 'setup: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }

if command -v rustup >/dev/null 2>&1; then
  rustup component add rustfmt clippy >/dev/null 2>&1 || say "could not add rustfmt/clippy with rustup"
elif ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  say "no rustup: install rustfmt and clippy with your Rust (CI runs cargo fmt and cargo clippy)"
fi

need_pkgs=()
command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium fonts-liberation)
command -v pgrep >/dev/null 2>&1 || need_pkgs+=(procps)
# crypt(3) for seed 004's workload (loaded at run time; no headers needed).
ldconfig -p 2>/dev/null | grep -q 'libcrypt\.so\.1 ' || need_pkgs+=(libcrypt1)
# A single-node Slurm for the cluster test (scripts/slurm-local.sh starts and stops it).
command -v slurmctld >/dev/null 2>&1 && command -v munged >/dev/null 2>&1 || need_pkgs+=(slurmctld slurmd slurm-client munge)
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import simpy, pyarrow' 2>/dev/null && ! python3 -m pip --version >/dev/null 2>&1; then
  need_pkgs+=(python3-pip)
fi
if [ ${#need_pkgs[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
  say "installing ${need_pkgs[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || say "apt-get update failed"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null \
    || say "could not install ${need_pkgs[*]}; the tests that need them will say so"
fi

if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import simpy' 2>/dev/null; then
  say "installing simpy (peer for the simulator benchmark)"
  python3 -m pip install -q simpy 2>/dev/null || python3 -m pip install -q --break-system-packages simpy || say "could not install simpy"
fi
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import pyarrow' 2>/dev/null; then
  say "installing pyarrow (reads the Parquet files results export writes, in its test)"
  python3 -m pip install -q pyarrow 2>/dev/null || python3 -m pip install -q --break-system-packages pyarrow \
    || say "could not install pyarrow"
fi

if [ -d /sys/kernel/tracing ] && [ ! -e /sys/kernel/tracing/events ]; then
  as_root mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null && say "mounted tracefs at /sys/kernel/tracing" \
    || say "could not mount tracefs (tracing tests will say why)"
fi
say "done"
