#!/usr/bin/env python3
"""METG(50%) per system and pattern from bench/task_bench.sh's runs.tsv.

Each line of runs.tsv: system, pattern, iterations, rep, elapsed seconds,
tasks, FLOPs. For each system, pattern and iteration count the median
elapsed time of the reps is kept. Time per task = elapsed x cores / tasks;
efficiency = FLOP/s over the pattern's peak (the highest FLOP/s any system
reached on that pattern in the run). METG is the smallest time per task
whose efficiency is at least the threshold, interpolated towards the next,
smaller granularity when that one is smaller still (as Task Bench's
scripts/chart_metg.py does).

Prints a Markdown table: METG in microseconds per pattern and system, the
peak beside, and the ratio of each redflow column over OpenMP's.
"""
import argparse
import collections
import statistics
import sys

import numpy


def read_runs(path):
    runs = collections.defaultdict(list)
    facts = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 7:
                sys.exit(f"metg: {path}:{n}: expected 7 tab-separated fields, got {len(parts)}")
            system, pattern, iterations, _rep, elapsed, tasks, flops = parts
            key = (system, pattern, int(iterations))
            runs[key].append(float(elapsed))
            facts[key] = (int(tasks), int(flops))
    return runs, facts


def metg(points, threshold):
    """points: (time_per_task, efficiency) by iterations, largest first."""
    above = [i for i, (_, eff) in enumerate(points) if eff >= threshold]
    if not above:
        return None
    i = min(above, key=lambda k: points[k][0])
    time, eff = points[i]
    if i + 1 < len(points) and points[i + 1][0] < time and points[i + 1][1] < threshold:
        nxt_time, nxt_eff = points[i + 1]
        time = float(numpy.interp(threshold, [nxt_eff, eff], [nxt_time, time]))
    return time


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs")
    ap.add_argument("--cores", type=int, required=True)
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--systems", nargs="+", required=True)
    args = ap.parse_args()
    runs, facts = read_runs(args.runs)
    patterns = list(dict.fromkeys(p for (_, p, _) in runs))
    header = ["pattern", "peak GFLOP/s"] + [f"{s} METG us" for s in args.systems]
    ratios = [s for s in args.systems if s.startswith("redflow") and "openmp" in args.systems]
    header += [f"{s} / openmp" for s in ratios]
    print("| " + " | ".join(header) + " |")
    print("|" + " --- |" * len(header))
    for pattern in patterns:
        rate = {}
        for (system, p, it), elapsed in runs.items():
            if p == pattern:
                tasks, flops = facts[(system, p, it)]
                rate[(system, it)] = (statistics.median(elapsed), tasks, flops)
        peak = max(flops / e for (e, _, flops) in rate.values())
        row = [pattern, f"{peak / 1e9:.1f}"]
        found = {}
        for system in args.systems:
            its = sorted((it for (s, it) in rate if s == system), reverse=True)
            points = [(rate[(system, it)][0] * args.cores / rate[(system, it)][1],
                       rate[(system, it)][2] / rate[(system, it)][0] / peak) for it in its]
            m = metg(points, args.threshold)
            found[system] = m
            row.append("-" if m is None else f"{m * 1e6:.1f}")
        for s in ratios:
            a, b = found.get(s), found.get("openmp")
            row.append("-" if a is None or b is None else f"{a / b:.2f}")
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
