#!/usr/bin/env python3
"""Round robin on one CPU in SimPy — the peer model for `schedlab sim bench --simpy`.

Usage: simpy_rr.py TASKS.csv QUANTUM_NS   (then `run` lines on stdin)

TASKS.csv has one `arrival_ns,burst_ns` line per task (written by `schedlab sim bench`),
sorted by arrival. The model matches schedlab's `rr`: a FIFO ready queue; the CPU runs the
head for min(quantum, remaining); a task whose quantum ends goes to the back, behind tasks that
arrived at the same instant. Events counted like schedlab's engine: one per arrival and one per
CPU stop (quantum end or burst end).

The model takes its timed runs one at a time, so that they interleave with schedlab's and a
slow spell of the host falls on both sides of a pair: after one untimed warm-up run it prints
one JSON line (events, avg_turnaround_ms, seconds of the warm-up); then for each line `run` on
stdin it runs the model once in a fresh environment and prints one JSON line (seconds: wall
time of the simulation only, not of reading the file), until end of input. By hand:
`printf 'run\nrun\n' | python3 simpy_rr.py tasks.csv 2000000`.
"""
import collections
import json
import sys
import time

import simpy


def simulate(tasks, quantum):
    """One run of the model; returns (events, seconds, total turnaround in ns)."""
    env = simpy.Environment()
    ready = collections.deque()
    state = {"events": 0, "idle": None, "turnaround": 0}

    def arrivals():
        for i, (arr, burst) in enumerate(tasks):
            if arr > env.now:
                yield env.timeout(arr - env.now)
            state["events"] += 1
            ready.append([i, burst])
            if state["idle"] is not None and not state["idle"].triggered:
                state["idle"].succeed()

    def cpu():
        done = 0
        while done < len(tasks):
            if not ready:
                state["idle"] = env.event()
                yield state["idle"]
                state["idle"] = None
                # Let every arrival of this instant join the queue first.
                yield env.timeout(0)
            task = ready.popleft()
            run = min(quantum, task[1])
            yield env.timeout(run)
            state["events"] += 1
            task[1] -= run
            if task[1] > 0:
                # Arrivals at this same instant were queued by the arrival process first only if
                # it ran before us; yield once so it does (schedlab queues arrivals first).
                yield env.timeout(0)
                ready.append(task)
            else:
                done += 1
                state["turnaround"] += env.now - tasks[task[0]][0]

    env.process(arrivals())
    env.process(cpu())
    t0 = time.perf_counter()
    env.run()
    secs = time.perf_counter() - t0
    return state["events"], secs, state["turnaround"]


def serve(tasks, quantum):
    """Warm up, say what the model computes, then run once per `run` request."""
    events, secs, turnaround = simulate(tasks, quantum)
    say({"events": events, "avg_turnaround_ms": turnaround / len(tasks) / 1e6, "seconds": secs})
    for request in sys.stdin:
        if request.strip() != "run":
            sys.exit(f"unknown request {request.strip()!r} (expected `run`)")
        e, secs, t = simulate(tasks, quantum)
        if (e, t) != (events, turnaround):
            sys.exit("the model gave different results on the same tasks")
        say({"seconds": secs})


def say(obj):
    print(json.dumps(obj), flush=True)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    path, quantum = sys.argv[1], int(sys.argv[2])
    tasks = []
    with open(path) as f:
        for line in f:
            a, b = line.split(",")
            tasks.append((int(a), int(b)))
    serve(tasks, quantum)


if __name__ == "__main__":
    main()
