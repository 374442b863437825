#!/usr/bin/env python3
"""summary.py DIR SIDE...: the medians of each side's runs in DIR (written by
scripts/perf/protocol.sh) and the ratios of the first side to each other one.

Read the ratios, not the absolute figures: the machine is shared, and every
round runs the sides one after the other under whatever else is running
(the load average of each run is in the table). It exits 1 when a run lost or
doubled an event (its bench's own check), else 0: it never judges a speed.
"""
import glob
import json
import re
import statistics
import sys


def side_name(side):
    return re.sub(r"[^A-Za-z0-9]", "_", side).rstrip("_")


def figures(d):
    s = d["shuffled"]
    cpu = s["cpu"]
    n = s["total_deliveries"]
    client = cpu.get("client_ms_per_delivery", cpu.get("node_ms_per_delivery"))
    ddb = cpu.get("dynamodb_local_ms_per_delivery") or 0
    queue = d.get("protocol", {}).get("queue_server_ms_per_delivery", 0)
    busy = cpu.get("machine_busy_ms")
    return {
        "deliveries/s": s["deliveries_per_s"],
        "latency p50 ms": s["latency_ms"]["p50"],
        "latency p99 ms": s["latency_ms"]["p99"],
        "client CPU ms/delivery": client,
        "DynamoDB Local CPU ms/delivery": ddb,
        "queue server CPU ms/delivery": queue,
        "stack CPU ms/delivery (client+DDB+queue)": client + ddb + queue,
        "machine busy CPU ms/delivery (incl. noise)": (busy / n) if busy else 0,
        "other processes CPU ms (noise)": cpu.get("machine_other_ms") or 0,
        "load average (1 min, before)": (cpu.get("loadavg_before") or [0])[0],
    }


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: summary.py DIR SIDE [SIDE...]")
    out, sides = sys.argv[1], sys.argv[2:]
    runs, bad = {}, []
    for side in sides:
        runs[side] = []
        for f in sorted(glob.glob(f"{out}/{side_name(side)}-*.json")):
            d = json.load(open(f))
            s = d["shuffled"]
            lost = not d.get("ok", False) or s.get("errors", 0) or not (s.get("table_check") or {}).get("ok", True)
            if lost:
                bad.append(f)
            runs[side].append(figures(d))
        if not runs[side]:
            sys.exit(f"summary: no runs of {side} in {out}")
    metrics = list(runs[sides[0]][0].keys())
    med = {side: {m: statistics.median(r[m] for r in runs[side]) for m in metrics} for side in sides}
    rng = {side: {m: (min(r[m] for r in runs[side]), max(r[m] for r in runs[side])) for m in metrics} for side in sides}
    head = ["metric"] + [f"{s} median (min-max)" for s in sides] + [f"{sides[0]} / {s}" for s in sides[1:]]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for m in metrics:
        row = [m] + [f"{med[s][m]:.4g} ({rng[s][m][0]:.4g}-{rng[s][m][1]:.4g})" for s in sides]
        row += [f"{med[sides[0]][m] / med[s][m]:.2f}" if med[s][m] else "-" for s in sides[1:]]
        print("| " + " | ".join(row) + " |")
    print()
    print("per run (side, deliveries/s, p99 ms, client CPU ms/delivery, load):")
    for side in sides:
        for i, r in enumerate(runs[side], 1):
            print(f"  {side} #{i}: {r['deliveries/s']:.1f}/s, p99 {r['latency p99 ms']:.1f}, "
                  f"client {r['client CPU ms/delivery']:.3f}, load {r['load average (1 min, before)']:.2f}")
    if bad:
        print("LOST OR DOUBLED EVENTS in: " + ", ".join(bad))
        sys.exit(1)
    print("every run: each unique event claimed once with one effect (the benches' own table checks)")


if __name__ == "__main__":
    main()
