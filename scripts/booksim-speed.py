#!/usr/bin/env python3
"""BookSim2 against reef on the same configs, back to back: wall time and peak memory
(README, "BookSim2 configs"). Each config runs on both, alternating, --repeat times; the
table gives the fastest run of each, the cycles each simulated (BookSim2 stops sampling once
its averages converge, reef runs the longest window BookSim2 would: docs/booksim.md), the
speed-up per simulated cycle, and the peak resident memory (/usr/bin/time).

The configs are BookSim2's examples reef runs and the three reference workloads of
`reef bench` as BookSim2 configs (tests/data/booksim/workloads), at the loads given below.

Usage: scripts/booksim-speed.py BOOKSIM_BINARY [REEF_BINARY] [--repeat N] [--only NAME,...]
"""

import argparse
import json
import os
import re
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data", "booksim")

# (name, file under tests/data/booksim, overrides for both)
RUNS = [
    ("torus88 at 0.15 packets", "examples/torus88", []),
    ("mesh88_lat at 0.1 flits", "examples/mesh88_lat", []),
    ("mesh 8×8, 8 VCs, 0.2 flits", "workloads/mesh8x8-uniform", ["num_vcs=8", "injection_rate=0.2"]),
    ("mesh 8×8, 1 VC, 0.2 flits", "workloads/mesh8x8-uniform", ["injection_rate=0.2"]),
    ("mesh 32×32, 0.05 flits", "workloads/mesh32x32-uniform", []),
    ("torus 16×16, 0.1 flits", "workloads/torus16x16-uniform", []),
    # BookSim2's other examples at 70 % of their saturation (saturation.csv), in flits.
    ("singleconfig (fly) at 0.47 flits", "examples/singleconfig",
     ["injection_rate_uses_flits=1", "injection_rate=0.4689"]),
    ("anynet at 0.16 flits", "examples/anynet/anynet_config", ["injection_rate_uses_flits=1", "injection_rate=0.1613"]),
    ("cmeshconfig at 0.084 flits", "examples/cmeshconfig", ["injection_rate_uses_flits=1", "injection_rate=0.0839"]),
    ("flatflyconfig at 0.5 flits", "examples/flatflyconfig", ["injection_rate_uses_flits=1", "injection_rate=0.504"]),
    ("fattree_config at 0.51 flits", "examples/fattree_config", ["injection_rate_uses_flits=1", "injection_rate=0.5109"]),
    # BookSim2's dragonfly example with k = 2 at 70 % of its saturation, internal_speedup =
    # 1.0 (reef refuses 2.0).
    ("dragonfly (k = 2) at 0.4 flits", "examples/dragonflyconfig",
     ["k=2", "internal_speedup=1.0", "injection_rate=0.3988"]),
]


def timed(args, cwd):
    t0 = time.time()
    p = subprocess.run(["/usr/bin/time", "-f", "PEAK_KB %M"] + args, capture_output=True, text=True, cwd=cwd)
    wall = time.time() - t0
    peak = re.findall(r"PEAK_KB (\d+)", p.stderr)
    return wall, int(peak[-1]) if peak else 0, p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("booksim")
    ap.add_argument("reef", nargs="?", default=os.path.join(ROOT, "target", "release", "reef"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", help="comma-separated names' first words (e.g. cmeshconfig,anynet)")
    a = ap.parse_args()
    booksim, reef = os.path.abspath(a.booksim), os.path.abspath(a.reef)
    print("| config | BookSim2 s | cycles | reef s | cycles | faster per cycle | BookSim2 MB | reef MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, path, over in RUNS:
        if a.only and name.split()[0] not in a.only.split(","):
            continue
        cfg = os.path.join(DATA, path)
        bs, rf = [], []
        for _ in range(a.repeat):
            w, m, p = timed([booksim, cfg] + over, os.path.dirname(cfg))
            if "Overall Traffic Statistics" not in p.stdout:
                raise SystemExit(f"{name}: BookSim2 did not finish:\n{p.stdout[-2000:]}")
            bs.append((w, m, int(re.findall(r"Time taken is (\d+) cycles", p.stdout)[-1])))
            j = os.path.join("/tmp", f"reef-speed-{os.getpid()}.json")
            w, m, p = timed([reef, "run", cfg] + over + ["-q", "--json", j], ROOT)
            if p.returncode != 0:
                raise SystemExit(f"{name}: reef failed:\n{p.stderr}")
            d = json.load(open(j))
            os.unlink(j)
            rf.append((w, m, round(d["sim_end_ns"] * 1000 / d["cycle_ps"])))
        b, r = min(bs), min(rf)
        speed = (b[0] / b[2]) / (r[0] / r[2])
        print(f"| {name} | {b[0]:.2f} | {b[2]} | {r[0]:.3f} | {r[2]} | {speed:.0f}× | "
              f"{max(x[1] for x in bs) / 1024:.0f} | {max(x[1] for x in rf) / 1024:.0f} |", flush=True)


if __name__ == "__main__":
    main()
