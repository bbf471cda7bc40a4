#!/usr/bin/env python3
"""reef against BookSim2's reference numbers (tests/data/booksim/reference.csv and
saturation.csv, from scripts/booksim-reference.py): runs reef on the same configs, loads and
seeds, and prints a Markdown table of mean packet latency per load (the mean over the seeds
on each side) and saturation throughput, with the deviation. Rows reef cannot run say why.

Saturation is found the same way on both sides: bisection to 0.0025 flits/node/cycle for the
highest load that is stable, where for reef stable means not saturated and a mean packet
latency under BookSim2's latency_thres (500 cycles).

Usage: scripts/booksim-compare.py [REEF_BINARY] [--only NAME,...] [--no-saturation]
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "booksim")


def rows(name):
    with open(os.path.join(DATA, name)) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def reef_run(binary, command, seed):
    """Runs reef on a BookSim2 command line (`booksim CFG k=v ...`); returns its JSON or the
    error it printed."""
    parts = command.split()
    cfg = os.path.join(DATA, parts[1])
    over = [p for p in parts[2:] if not p.startswith("seed=")] + [f"seed={seed}"]
    with tempfile.NamedTemporaryFile(suffix=".json") as j:
        t0 = time.time()
        p = subprocess.run(["/usr/bin/time", "-f", "PEAK_KB %M", binary, "run", cfg, *over, "-q", "--json", j.name],
                           capture_output=True, text=True)
        wall = time.time() - t0
        if p.returncode != 0:
            err = [l for l in p.stderr.splitlines() if l.startswith("error:")]
            return None, (err[0] if err else p.stderr.strip().splitlines()[-1]), wall
        r = json.load(open(j.name))
        peak = [l for l in p.stderr.splitlines() if l.startswith("PEAK_KB")]
        r["peak_kb"] = int(peak[-1].split()[1]) if peak else None
        return r, None, wall


def stable(r):
    return r is not None and not r["saturated"] and r["packet_latency_cycles"]["mean"] <= 500.0


def saturation(binary, command, seed):
    lo, hi = 0.0, 1.0
    while hi - lo > 0.0025:
        mid = (lo + hi) / 2
        r, err, _ = reef_run(binary, command + f" injection_rate={mid:.6f}", seed)
        if err:
            return None, err
        if stable(r):
            lo = mid
        else:
            hi = mid
    return lo, None


def pct(a, b):
    return f"{100.0 * (a - b) / b:+.1f} %"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reef", nargs="?", default=os.path.join(ROOT, "target", "release", "reef"))
    ap.add_argument("--only")
    ap.add_argument("--no-saturation", action="store_true")
    a = ap.parse_args()
    ref = rows("reference.csv")
    sats = rows("saturation.csv")
    configs = []
    for r in ref:
        if r["config"] not in configs and (not a.only or r["config"] in a.only.split(",")):
            configs.append(r["config"])
    print("| config | load | BookSim2 latency | reef latency | deviation | BookSim2 s | reef s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    speed = []
    for name in configs:
        mine = [r for r in ref if r["config"] == name]
        loads = []
        for r in mine:
            if r["load"] not in loads:
                loads.append(r["load"])
        for load in loads:
            pts = [r for r in mine if r["load"] == load]
            bs = [float(r["packet_latency"]) for r in pts if r["stable"] == "1"]
            bs_s = sum(float(r["wall_s"]) for r in pts) / len(pts)
            got, errs, walls = [], [], []
            for r in pts:
                cmd = r["command"]
                if load != "as configured":
                    cmd = " ".join(p for p in cmd.split() if not p.startswith("injection_rate=")) + f" injection_rate={load}"
                res, err, wall = reef_run(a.reef, cmd, int(r["seed"]))
                walls.append(wall)
                if err:
                    errs.append(err)
                elif stable(res):
                    got.append(res["packet_latency_cycles"]["mean"])
                    speed.append((name, float(r["wall_s"]), int(r["peak_kb"] or 0), wall, res.get("peak_kb")))
            b = sum(bs) / len(bs) if bs else None
            g = sum(got) / len(got) if got else None
            if errs:
                print(f"| {name} | {load} | {b:.2f} | not run: {errs[0].replace('|', '/')} | | {bs_s:.2f} | |" if b else
                      f"| {name} | {load} | unstable | not run: {errs[0]} | | {bs_s:.2f} | |")
            elif b is None or g is None:
                print(f"| {name} | {load} | {'%.2f' % b if b else 'unstable'} | {'%.2f' % g if g else 'unstable'} | | {bs_s:.2f} | {sum(walls) / len(walls):.2f} |")
            else:
                print(f"| {name} | {load} | {b:.2f} | {g:.2f} | {pct(g, b)} | {bs_s:.2f} | {sum(walls) / len(walls):.2f} |")
            sys.stdout.flush()
    if not a.no_saturation:
        print()
        print("| config | BookSim2 saturation | reef saturation | deviation |")
        print("|---|---:|---:|---:|")
        for name in configs:
            mine = [s for s in sats if s["config"] == name]
            if not mine:
                continue
            b = sum(float(s["saturation"]) for s in mine) / len(mine)
            got, err = [], None
            for s in mine:
                v, err = saturation(a.reef, s["command"], int(s["seed"]))
                if err:
                    break
                got.append(v)
            if err:
                print(f"| {name} | {b:.4f} | not run: {err} | |")
            else:
                g = sum(got) / len(got)
                print(f"| {name} | {b:.4f} | {g:.4f} | {pct(g, b)} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
